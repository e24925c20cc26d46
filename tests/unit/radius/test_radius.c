/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/radius without EAL: the codec against the examples of RFC 2865
 * section 7 (PAP and CHAP Access-Request/Accept, secret "xyzzy5461"), the
 * User-Password hiding of RFC 2865 5.2, the Message-Authenticator of RFC
 * 3579 3.2 / RFC 5176 3.3 built and checked both ways, hostile framing, the
 * authorisation attributes; then the client and the DAE listener over
 * loopback UDP against servers played by this test (retransmission,
 * failover, dead time, forged and unsigned answers dropped, the
 * outstanding limit, cancel, DAE ACK/NAK, bad secret, duplicates).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "check.h"
#include "egw_radius.h"
#include "radius_private.h"

static const uint8_t secret[] = "xyzzy5461";
#define SLEN (sizeof(secret) - 1)

/* RFC 2865 7.1: nemo, password "arctangent", NAS 192.168.1.16 port 3 */
static const uint8_t rfc7_1_req[] = {
	0x01, 0x00, 0x00, 0x38, 0x0f, 0x40, 0x3f, 0x94, 0x73, 0x97, 0x80, 0x57, 0xbd, 0x83,
	0xd5, 0xcb, 0x98, 0xf4, 0x22, 0x7a, 0x01, 0x06, 0x6e, 0x65, 0x6d, 0x6f, 0x02, 0x12,
	0x0d, 0xbe, 0x70, 0x8d, 0x93, 0xd4, 0x13, 0xce, 0x31, 0x96, 0xe4, 0x3f, 0x78, 0x2a,
	0x0a, 0xee, 0x04, 0x06, 0xc0, 0xa8, 0x01, 0x10, 0x05, 0x06, 0x00, 0x00, 0x00, 0x03};
/* RFC 2865 7.1: the Access-Accept (Service-Type Login, Login-Service Telnet,
 * Login-IP-Host 192.168.1.3) */
static const uint8_t rfc7_1_acc[] = {0x02, 0x00, 0x00, 0x26, 0x86, 0xfe, 0x22, 0x0e, 0x76, 0x24,
				     0xba, 0x2a, 0x10, 0x05, 0xf6, 0xbf, 0x9b, 0x55, 0xe0, 0xb2,
				     0x06, 0x06, 0x00, 0x00, 0x00, 0x01, 0x0f, 0x06, 0x00, 0x00,
				     0x00, 0x00, 0x0e, 0x06, 0xc0, 0xa8, 0x01, 0x03};
/* RFC 2865 7.2: flopsy by CHAP, and the Access-Accept (Framed, PPP,
 * 255.255.255.254, Routing none, MTU 1500, Van Jacobson) */
static const uint8_t rfc7_2_req[] = {
	0x01, 0x01, 0x00, 0x47, 0x2a, 0xee, 0x86, 0xf0, 0x8d, 0x0d, 0x55, 0x96, 0x9c, 0xa5, 0x97,
	0x8e, 0x0d, 0x33, 0x67, 0xa2, 0x01, 0x08, 0x66, 0x6c, 0x6f, 0x70, 0x73, 0x79, 0x03, 0x13,
	0x16, 0xe9, 0x75, 0x57, 0xc3, 0x16, 0x18, 0x58, 0x95, 0xf2, 0x93, 0xff, 0x63, 0x44, 0x07,
	0x72, 0x75, 0x04, 0x06, 0xc0, 0xa8, 0x01, 0x10, 0x05, 0x06, 0x00, 0x00, 0x00, 0x14, 0x06,
	0x06, 0x00, 0x00, 0x00, 0x02, 0x07, 0x06, 0x00, 0x00, 0x00, 0x01};
static const uint8_t rfc7_2_acc[] = {
	0x02, 0x01, 0x00, 0x38, 0x15, 0xef, 0xbc, 0x7d, 0xab, 0x26, 0xcf, 0xa3, 0xdc, 0x34,
	0xd9, 0xc0, 0x3c, 0x86, 0x01, 0xa4, 0x06, 0x06, 0x00, 0x00, 0x00, 0x02, 0x07, 0x06,
	0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0xff, 0xff, 0xff, 0xfe, 0x0a, 0x06, 0x00, 0x00,
	0x00, 0x02, 0x0d, 0x06, 0x00, 0x00, 0x00, 0x01, 0x0c, 0x06, 0x00, 0x00, 0x05, 0xdc};

static void
test_rfc2865_examples(void)
{
	uint8_t out[32], buf[64];
	size_t plen;
	int n;

	CHECK(egw_radius_check(rfc7_1_req, sizeof(rfc7_1_req), &plen) == EGW_RADIUS_OK &&
		      plen == sizeof(rfc7_1_req),
	      "7.1 request frames");
	/* 5.2 hiding of "arctangent" with the request's authenticator */
	n = egw_radius_password_hide((const uint8_t *)"arctangent", 10, secret, SLEN,
				     &rfc7_1_req[4], out);
	CHECK(n == 16 && memcmp(out, &rfc7_1_req[28], 16) == 0, "7.1 User-Password hidden (%d)", n);
	n = egw_radius_password_unhide(&rfc7_1_req[28], 16, secret, SLEN, &rfc7_1_req[4], out);
	CHECK(n == 16 && memcmp(out, "arctangent\0\0\0\0\0\0", 16) == 0,
	      "7.1 User-Password recovered");
	/* Response Authenticators of the two Accepts */
	CHECK(egw_radius_verify(rfc7_1_acc, sizeof(rfc7_1_acc), secret, SLEN, &rfc7_1_req[4],
				false) == EGW_RADIUS_OK,
	      "7.1 Access-Accept Response Authenticator");
	CHECK(egw_radius_verify(rfc7_2_acc, sizeof(rfc7_2_acc), secret, SLEN, &rfc7_2_req[4],
				false) == EGW_RADIUS_OK,
	      "7.2 Access-Accept Response Authenticator");
	/* without a Message-Authenticator they must be refused where one is
	 * required (BlastRADIUS), and a changed byte anywhere is caught */
	CHECK(egw_radius_verify(rfc7_1_acc, sizeof(rfc7_1_acc), secret, SLEN, &rfc7_1_req[4],
				true) == EGW_RADIUS_E_NO_MSGAUTH,
	      "7.1 Accept refused without Message-Authenticator");
	memcpy(buf, rfc7_2_acc, sizeof(rfc7_2_acc));
	buf[sizeof(rfc7_2_acc) - 1] ^= 1;
	CHECK(egw_radius_verify(buf, sizeof(rfc7_2_acc), secret, SLEN, &rfc7_2_req[4], false) ==
		      EGW_RADIUS_E_AUTH,
	      "7.2 Accept with a changed MTU refused");
	CHECK(egw_radius_verify(rfc7_2_acc, sizeof(rfc7_2_acc), (const uint8_t *)"xyzzy5462", 9,
				&rfc7_2_req[4], false) == EGW_RADIUS_E_AUTH,
	      "7.2 Accept with another secret refused");
}

static void
test_password_lengths(void)
{
	uint8_t auth[16], pw[129] = {0}, h[144], back[128];
	size_t len;
	int n;

	for (len = 0; len < 16; len++)
		auth[len] = (uint8_t)(len * 7 + 1);
	for (len = 0; len <= 128; len += 1) {
		size_t k;

		for (k = 0; k < len; k++)
			pw[k] = (uint8_t)('a' + k % 26);
		n = egw_radius_password_hide(pw, len, secret, SLEN, auth, h);
		CHECK(n == (int)(len == 0 ? 16 : (len + 15) / 16 * 16), "hide %zu: length %d", len,
		      n);
		if (n < 0)
			continue;
		egw_radius_password_unhide(h, (size_t)n, secret, SLEN, auth, back);
		CHECK(memcmp(back, pw, len) == 0, "hide %zu: round trip", len);
		for (k = len; k < (size_t)n; k++)
			CHECK(back[k] == 0, "hide %zu: NUL padding", len);
	}
	CHECK(egw_radius_password_hide(pw, 129, secret, SLEN, auth, h) == -EINVAL,
	      "129-byte password refused");
	CHECK(egw_radius_password_hide(pw, 4, secret, 0, auth, h) == -EINVAL,
	      "empty secret refused");
}

static void
test_msgauth(void)
{
	static const uint8_t z16[16];
	uint8_t req[256], rsp[256], bad[256];
	struct egw_radius_pkt p, q;
	int i;

	/* Access-Request: HMAC over its own random authenticator */
	egw_radius_pkt_init(&p, req, sizeof(req), EGW_RADIUS_ACCESS_REQUEST, 7);
	for (i = 0; i < 16; i++)
		req[4 + i] = (uint8_t)(0xa0 + i);
	egw_radius_attr_put(&p, EGW_RADIUS_A_USER_NAME, "nemo", 4);
	egw_radius_attr_put(&p, EGW_RADIUS_A_MESSAGE_AUTHENTICATOR, z16, 16);
	CHECK(egw_radius_finish(&p, secret, SLEN, NULL) == 0, "finish Access-Request");
	CHECK(req[4] == 0xa0 && req[19] == 0xaf, "Access-Request keeps its authenticator");
	CHECK(memcmp(&req[p.len - 16], z16, 16) != 0, "Message-Authenticator filled in");
	CHECK(radius_verify_access_request(req, p.len, secret, SLEN) == EGW_RADIUS_OK,
	      "Message-Authenticator of the Access-Request verifies");
	memcpy(bad, req, p.len);
	bad[22] ^= 0x20; /* "Nemo" */
	CHECK(radius_verify_access_request(bad, p.len, secret, SLEN) == EGW_RADIUS_E_MSGAUTH,
	      "a changed User-Name breaks it");

	/* the Accept: HMAC over the request's authenticator, then the
	 * Response Authenticator over the filled-in value */
	egw_radius_pkt_init(&q, rsp, sizeof(rsp), EGW_RADIUS_ACCESS_ACCEPT, 7);
	egw_radius_attr_put_u32(&q, EGW_RADIUS_A_SESSION_TIMEOUT, 3600);
	egw_radius_attr_put(&q, EGW_RADIUS_A_MESSAGE_AUTHENTICATOR, z16, 16);
	CHECK(egw_radius_finish(&q, secret, SLEN, &req[4]) == 0, "finish Accept");
	CHECK(egw_radius_verify(rsp, q.len, secret, SLEN, &req[4], true) == EGW_RADIUS_OK,
	      "Accept verifies with its Message-Authenticator");
	/* a wrong Message-Authenticator under a correct Response
	 * Authenticator (what a BlastRADIUS forgery looks like) */
	memcpy(bad, rsp, q.len);
	bad[q.len - 1] ^= 1;
	{
		uint8_t m[4096];
		unsigned int ol = 0;

		memcpy(m, bad, 4);
		memcpy(m + 4, &req[4], 16);
		memcpy(m + 20, bad + 20, q.len - 20);
		memcpy(m + q.len, secret, SLEN);
		EVP_Digest(m, q.len + SLEN, &bad[4], &ol, EVP_md5(), NULL);
	}
	CHECK(egw_radius_verify(bad, q.len, secret, SLEN, &req[4], false) == EGW_RADIUS_E_MSGAUTH,
	      "Accept with a wrong Message-Authenticator under a good authenticator refused");
	bad[q.len - 1] ^= 1;
	CHECK(egw_radius_verify(bad, q.len, secret, SLEN, &req[4], true) == EGW_RADIUS_E_AUTH,
	      "Accept with a changed Message-Authenticator refused");

	/* two Message-Authenticators, or one of 15 bytes: refused */
	egw_radius_pkt_init(&q, rsp, sizeof(rsp), EGW_RADIUS_ACCESS_ACCEPT, 7);
	egw_radius_attr_put(&q, EGW_RADIUS_A_MESSAGE_AUTHENTICATOR, z16, 16);
	egw_radius_attr_put(&q, EGW_RADIUS_A_MESSAGE_AUTHENTICATOR, z16, 16);
	CHECK(egw_radius_finish(&q, secret, SLEN, &req[4]) == -EINVAL,
	      "two Message-Authenticators cannot be signed");
	egw_radius_pkt_init(&q, rsp, sizeof(rsp), EGW_RADIUS_ACCESS_ACCEPT, 7);
	egw_radius_attr_put(&q, EGW_RADIUS_A_MESSAGE_AUTHENTICATOR, z16, 15);
	CHECK(egw_radius_finish(&q, secret, SLEN, &req[4]) == -EINVAL,
	      "a 15-byte Message-Authenticator cannot be signed");

	/* Disconnect-Request (RFC 5176 3.3): MA over a zero authenticator,
	 * then the Request Authenticator over the packet */
	egw_radius_pkt_init(&p, req, sizeof(req), EGW_RADIUS_DISCONNECT_REQUEST, 9);
	egw_radius_attr_put(&p, EGW_RADIUS_A_ACCT_SESSION_ID, "0000000a", 8);
	egw_radius_attr_put(&p, EGW_RADIUS_A_MESSAGE_AUTHENTICATOR, z16, 16);
	CHECK(egw_radius_finish(&p, secret, SLEN, NULL) == 0, "finish Disconnect-Request");
	CHECK(egw_radius_verify(req, p.len, secret, SLEN, NULL, true) == EGW_RADIUS_OK,
	      "Disconnect-Request verifies");
	CHECK(egw_radius_verify(req, p.len, (const uint8_t *)"other", 5, NULL, true) ==
		      EGW_RADIUS_E_AUTH,
	      "Disconnect-Request with another secret refused");
	/* an Accounting-Request without MA: good where it is not required */
	egw_radius_pkt_init(&p, req, sizeof(req), EGW_RADIUS_ACCT_REQUEST, 3);
	egw_radius_attr_put_u32(&p, EGW_RADIUS_A_ACCT_STATUS_TYPE, EGW_RADIUS_ACCT_START);
	CHECK(egw_radius_finish(&p, secret, SLEN, NULL) == 0, "finish Accounting-Request");
	CHECK(egw_radius_verify(req, p.len, secret, SLEN, NULL, false) == EGW_RADIUS_OK,
	      "Accounting-Request Request Authenticator (RFC 2866 3)");
	CHECK(egw_radius_verify(req, p.len, secret, SLEN, NULL, true) == EGW_RADIUS_E_NO_MSGAUTH,
	      "Accounting-Request without MA where required");
	/* an Access-Request cannot be verified on its own authenticator */
	CHECK(egw_radius_verify(rfc7_1_req, sizeof(rfc7_1_req), secret, SLEN, NULL, false) ==
		      EGW_RADIUS_E_AUTH,
	      "Access-Request refused as a hashed request");
}

static void
test_framing(void)
{
	uint8_t b[64];
	size_t plen;

	memcpy(b, rfc7_1_acc, sizeof(rfc7_1_acc));
	CHECK(egw_radius_check(b, 19, &plen) == EGW_RADIUS_E_SHORT, "19 bytes: short");
	CHECK(egw_radius_check(b, sizeof(rfc7_1_acc) - 1, &plen) == EGW_RADIUS_E_LENGTH,
	      "Length past the datagram");
	memset(b + sizeof(rfc7_1_acc), 0xee, 8);
	CHECK(egw_radius_check(b, sizeof(rfc7_1_acc) + 8, &plen) == EGW_RADIUS_OK &&
		      plen == sizeof(rfc7_1_acc),
	      "padding after Length ignored");
	b[3] = 19;
	CHECK(egw_radius_check(b, sizeof(rfc7_1_acc), &plen) == EGW_RADIUS_E_LENGTH, "Length 19");
	b[2] = 0x10;
	b[3] = 0x01;
	CHECK(egw_radius_check(b, 64, &plen) == EGW_RADIUS_E_LENGTH, "Length 4097");
	memcpy(b, rfc7_1_acc, sizeof(rfc7_1_acc));
	b[21] = 0; /* zero-length attribute */
	CHECK(egw_radius_check(b, sizeof(rfc7_1_acc), &plen) == EGW_RADIUS_E_ATTR,
	      "zero-length attribute");
	b[21] = 1;
	CHECK(egw_radius_check(b, sizeof(rfc7_1_acc), &plen) == EGW_RADIUS_E_ATTR,
	      "attribute length 1");
	memcpy(b, rfc7_1_acc, sizeof(rfc7_1_acc));
	b[33] = 7; /* the last attribute one byte past Length */
	CHECK(egw_radius_check(b, sizeof(rfc7_1_acc), &plen) == EGW_RADIUS_E_ATTR,
	      "attribute past Length");
	/* a Length that cuts an attribute header in two */
	memcpy(b, rfc7_1_acc, sizeof(rfc7_1_acc));
	b[3] = 21;
	CHECK(egw_radius_check(b, sizeof(rfc7_1_acc), &plen) == EGW_RADIUS_E_ATTR,
	      "half an attribute header");
}

static void
test_authz(void)
{
	uint8_t b[1024], v[32];
	struct egw_radius_pkt p;
	struct egw_radius_authz z;
	struct egw_radius_prefix r;
	uint64_t rx, tx;
	uint32_t a;

	egw_radius_pkt_init(&p, b, sizeof(b), EGW_RADIUS_ACCESS_ACCEPT, 1);
	a = htonl(0x64400a05);
	egw_radius_attr_put(&p, EGW_RADIUS_A_FRAMED_IP_ADDRESS, &a, 4);
	egw_radius_attr_put(&p, EGW_RADIUS_A_FRAMED_ROUTE, "198.51.100.0/24 0.0.0.0 1", 25);
	egw_radius_attr_put(&p, EGW_RADIUS_A_FRAMED_ROUTE, "203.0.113.7", 11);
	egw_radius_attr_put(&p, EGW_RADIUS_A_FRAMED_IPV6_ROUTE, "2001:db8:77::/48 :: 1", 21);
	egw_radius_attr_put(&p, EGW_RADIUS_A_FRAMED_ROUTE, "300.1.1.0/24", 12); /* bad */
	v[0] = 0;
	v[1] = 56;
	memcpy(&v[2], "\x20\x01\x0d\xb8\x00\x99\x01", 7);
	egw_radius_attr_put(&p, EGW_RADIUS_A_DELEGATED_IPV6_PREFIX, v, 9);
	v[1] = 64;
	memcpy(&v[2], "\x20\x01\x0d\xb8\x00\x42\x00\x07", 8);
	egw_radius_attr_put(&p, EGW_RADIUS_A_FRAMED_IPV6_PREFIX, v, 10);
	v[1] = 64;
	egw_radius_attr_put(&p, EGW_RADIUS_A_FRAMED_IPV6_PREFIX, v, 5); /* too short: bad */
	egw_radius_attr_put_u32(&p, EGW_RADIUS_A_SESSION_TIMEOUT, 7200);
	egw_radius_attr_put_u32(&p, EGW_RADIUS_A_IDLE_TIMEOUT, 600);
	egw_radius_attr_put_u32(&p, EGW_RADIUS_A_ACCT_INTERIM_INTERVAL, 300);
	egw_radius_attr_put_u32(&p, EGW_RADIUS_A_FRAMED_MTU, 1400);
	egw_radius_attr_put(&p, EGW_RADIUS_A_FILTER_ID, "gold", 4);
	egw_radius_attr_put(&p, EGW_RADIUS_A_CLASS, "\x01\x02\x00\x03", 4);
	egw_radius_attr_put(&p, EGW_RADIUS_A_REPLY_MESSAGE, "Hello", 5);
	a = htonl(0xc0000235);
	egw_radius_vsa_put(&p, EGW_RADIUS_VENDOR_MICROSOFT, EGW_RADIUS_MS_PRIMARY_DNS, &a, 4);
	egw_radius_vsa_put(&p, EGW_RADIUS_VENDOR_MIKROTIK, EGW_RADIUS_MIKROTIK_RATE_LIMIT,
			   "10M/50M 20M/60M", 15);
	egw_radius_attr_put_u32(&p, EGW_RADIUS_A_SESSION_TIMEOUT + 0, 1);  /* a second: last wins */
	egw_radius_attr_put(&p, EGW_RADIUS_A_IDLE_TIMEOUT, "\x00\x01", 2); /* bad */
	CHECK(egw_radius_check(b, p.len, NULL) == EGW_RADIUS_OK, "authz packet frames");
	egw_radius_authz_parse(b, p.len, &z);
	CHECK(z.framed_ip == htonl(0x64400a05) && (z.present & EGW_RADIUS_Z_FRAMED_IP),
	      "Framed-IP-Address");
	CHECK(z.nb_routes == 3, "three good routes (%u)", z.nb_routes);
	CHECK(z.routes[0].family == AF_INET && z.routes[0].len == 24 &&
		      memcmp(z.routes[0].addr, "\xc6\x33\x64\x00", 4) == 0,
	      "Framed-Route /24");
	CHECK(z.routes[1].len == 32, "Framed-Route without a length is a host route");
	CHECK(z.routes[2].family == AF_INET6 && z.routes[2].len == 48, "Framed-IPv6-Route /48");
	CHECK(z.delegated_prefix.len == 56 && z.delegated_prefix.addr[5] == 0x99 &&
		      z.delegated_prefix.addr[7] == 0,
	      "Delegated-IPv6-Prefix /56 (RFC 4818, 7 prefix bytes)");
	CHECK(z.framed_ipv6_prefix.len == 64 && z.framed_ipv6_prefix.addr[7] == 7,
	      "Framed-IPv6-Prefix /64");
	CHECK(z.session_timeout == 1 && z.idle_timeout == 600 && z.interim_interval == 300,
	      "timeouts and interim");
	CHECK(z.framed_mtu == 1400, "Framed-MTU");
	CHECK(strcmp(z.filter_id, "gold") == 0, "Filter-Id");
	CHECK(z.nb_class == 1 && z.class_len[0] == 4 && z.class_val[0][3] == 3,
	      "Class kept as bytes");
	CHECK(strcmp(z.reply_message, "Hello") == 0, "Reply-Message");
	CHECK(z.dns4[0] == htonl(0xc0000235) && z.dns4[1] == 0, "MS-Primary-DNS-Server");
	CHECK(z.rate_up_bps == 10000000 && z.rate_down_bps == 50000000, "Mikrotik-Rate-Limit");
	CHECK(z.bad == 3, "three bad values counted (%u)", z.bad);

	CHECK(egw_radius_rate_parse((const uint8_t *)"512k", 4, &rx, &tx) == 0 && rx == 512000 &&
		      tx == 512000,
	      "rate 512k both ways");
	CHECK(egw_radius_rate_parse((const uint8_t *)"1G/x", 4, &rx, &tx) == -EINVAL,
	      "rate 1G/x refused");
	CHECK(egw_radius_route4_parse((const uint8_t *)"10.0.0.0/33", 11, &r) == -EINVAL,
	      "route /33 refused");
	CHECK(egw_radius_route4_parse((const uint8_t *)"10.0.0.0/", 9, &r) == -EINVAL,
	      "route / refused");

	/* 255.255.255.254: the NAS picks from a pool */
	egw_radius_pkt_init(&p, b, sizeof(b), EGW_RADIUS_ACCESS_ACCEPT, 1);
	a = htonl(0xfffffffe);
	egw_radius_attr_put(&p, EGW_RADIUS_A_FRAMED_IP_ADDRESS, &a, 4);
	egw_radius_attr_put(&p, EGW_RADIUS_A_FRAMED_POOL, "100.64.1.0/24", 13);
	egw_radius_authz_parse(b, p.len, &z);
	CHECK(!(z.present & EGW_RADIUS_Z_FRAMED_IP) && strcmp(z.framed_pool, "100.64.1.0/24") == 0,
	      "255.255.255.254 and Framed-Pool");
}

/* ---------------- the client over loopback ---------------- */

static int
udp_server(uint16_t *port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof(a);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &al) < 0) {
		perror("udp_server");
		exit(1);
	}
	*port = ntohs(a.sin_port);
	return fd;
}

/* Receive one datagram within ms while polling the client. */
static ssize_t
srv_recv(struct egw_radius *r, int fd, uint8_t *buf, size_t room, struct sockaddr_in *from, int ms)
{
	struct pollfd pf = {.fd = fd, .events = POLLIN};
	socklen_t fl = sizeof(*from);
	int i;

	for (i = 0; i < ms; i++) {
		egw_radius_poll(r);
		if (poll(&pf, 1, 1) == 1)
			return recvfrom(fd, buf, room, 0, (struct sockaddr *)from, &fl);
	}
	return -1;
}

static struct {
	int calls, status;
	uint8_t code;
} done_seen;

static void
done_cb(void *arg, int status, const uint8_t *pkt, size_t len)
{
	(void)arg;
	(void)len;
	done_seen.calls++;
	done_seen.status = status;
	done_seen.code = pkt != NULL ? pkt[0] : 0;
}

/* Poll the client about every millisecond, at most ms times, until a
 * request's callback has run. */
static void
poll_done(struct egw_radius *r, unsigned int ms)
{
	unsigned int i;

	for (i = 0; i < ms && done_seen.calls == 0; i++) {
		egw_radius_poll(r);
		usleep(1000);
	}
}

static uint64_t
cnt(const struct egw_radius *r, const char *name)
{
	const char *names[RADIUS_CNT_MAX];
	uint64_t v[RADIUS_CNT_MAX];
	unsigned int n = egw_radius_counters(r, names, v, RADIUS_CNT_MAX), i;

	for (i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return v[i];
	printf("no counter %s\n", name);
	failures++;
	return 0;
}

static void
server_conf(struct egw_radius_server_conf *c, uint16_t port, unsigned int prio,
	    unsigned int timeout_ms, unsigned int retries)
{
	struct sockaddr_in *a = (struct sockaddr_in *)&c->addr;

	memset(c, 0, sizeof(*c));
	a->sin_family = AF_INET;
	a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a->sin_port = htons(port);
	c->acct_port = port;
	memcpy(c->secret, secret, SLEN);
	c->secret_len = SLEN;
	c->priority = prio;
	c->timeout_ms = timeout_ms;
	c->retries = retries;
}

/* Answer req (received on fd from to) with code; ma: with a
 * Message-Authenticator; forge: break the Response Authenticator. */
static void
answer(int fd, const uint8_t *req, const struct sockaddr_in *to, uint8_t code, bool ma, bool forge)
{
	static const uint8_t z16[16];
	uint8_t b[256];
	struct egw_radius_pkt p;

	egw_radius_pkt_init(&p, b, sizeof(b), code, req[1]);
	egw_radius_attr_put_u32(&p, EGW_RADIUS_A_SESSION_TIMEOUT, 60);
	if (ma)
		egw_radius_attr_put(&p, EGW_RADIUS_A_MESSAGE_AUTHENTICATOR, z16, 16);
	egw_radius_finish(&p, secret, SLEN, &req[4]);
	if (forge)
		b[10] ^= 0x55;
	sendto(fd, b, p.len, 0, (const struct sockaddr *)to, sizeof(*to));
}

static void
test_client(void)
{
	struct egw_radius_server_conf c;
	struct egw_radius *r = egw_radius_create(4);
	uint8_t b1[4096], b2[4096], pw[32];
	struct sockaddr_in from;
	uint16_t p1, p2;
	int s1 = udp_server(&p1), s2 = udp_server(&p2), i;
	uint8_t attrs[64];
	struct egw_radius_pkt ap;
	ssize_t n1, n2;
	uint64_t h;
	uint8_t vl;
	const uint8_t *v;

	CHECK(r != NULL, "client created");
	/* attributes as a caller encodes them: build in a packet and take
	 * the bytes behind the header */
	egw_radius_pkt_init(&ap, attrs, sizeof(attrs), 0, 0);
	egw_radius_attr_put(&ap, EGW_RADIUS_A_USER_NAME, "alice", 5);
	CHECK(egw_radius_send(r, EGW_RADIUS_ACCESS_REQUEST, attrs + 20, ap.len - 20, NULL, 0,
			      done_cb, NULL, NULL) == -ENOENT &&
		      cnt(r, "no_server") == 1,
	      "no server: -ENOENT, counted");
	server_conf(&c, p1, 1, 60, 1);
	CHECK(egw_radius_server_add(r, &c) == 0, "primary added");
	CHECK(egw_radius_server_add(r, &c) == -EEXIST, "same server twice refused");
	server_conf(&c, p2, 2, 60, 0);
	CHECK(egw_radius_server_add(r, &c) == 0, "secondary added");
	egw_radius_set_dead_time(r, 1);

	/* PAP: hidden with the server's secret, MA on the request, an
	 * unsigned and a forged answer dropped, the real one taken */
	CHECK(egw_radius_send(r, EGW_RADIUS_ACCESS_REQUEST, attrs + 20, ap.len - 20,
			      (const uint8_t *)"wonderland", 10, done_cb, NULL, &h) == 0,
	      "Access-Request sent");
	n1 = srv_recv(r, s1, b1, sizeof(b1), &from, 500);
	CHECK(n1 > 20 && b1[0] == EGW_RADIUS_ACCESS_REQUEST, "primary got it (%zd)", n1);
	if (n1 <= 20)
		goto out;
	CHECK(radius_verify_access_request(b1, (size_t)n1, secret, SLEN) == EGW_RADIUS_OK,
	      "the request's Message-Authenticator verifies");
	v = egw_radius_attr_find(b1, (size_t)n1, EGW_RADIUS_A_USER_PASSWORD, &vl);
	CHECK(v != NULL && vl == 16, "User-Password of 16 bytes");
	if (v != NULL && vl == 16) {
		egw_radius_password_unhide(v, 16, secret, SLEN, &b1[4], pw);
		CHECK(memcmp(pw, "wonderland\0\0\0\0\0\0", 16) == 0, "User-Password unhides");
	}
	answer(s1, b1, &from, EGW_RADIUS_ACCESS_ACCEPT, false, false);
	answer(s1, b1, &from, EGW_RADIUS_ACCESS_ACCEPT, true, true);
	poll_done(r, 20);
	CHECK(done_seen.calls == 0, "unsigned and forged Accepts did not end the request");
	CHECK(cnt(r, "rx_no_msgauth") == 1 && cnt(r, "rx_bad_authenticator") == 1,
	      "both counted (no_msgauth %lu, bad_authenticator %lu)",
	      (unsigned long)cnt(r, "rx_no_msgauth"),
	      (unsigned long)cnt(r, "rx_bad_authenticator"));
	/* the retransmission (same packet, RFC 5080) arrives meanwhile */
	n2 = srv_recv(r, s1, b2, sizeof(b2), &from, 500);
	CHECK(n2 == n1 && memcmp(b1, b2, (size_t)n1) == 0, "retransmission is the same datagram");
	answer(s1, b1, &from, EGW_RADIUS_ACCESS_ACCEPT, true, false);
	poll_done(r, 200);
	CHECK(done_seen.calls == 1 && done_seen.status == 0 &&
		      done_seen.code == EGW_RADIUS_ACCESS_ACCEPT,
	      "signed Accept ends the request (calls %d status %d)", done_seen.calls,
	      done_seen.status);
	CHECK(egw_radius_cancel(r, h) == -ENOENT, "a finished request cannot be cancelled");

	/* failover: the primary never answers (2 transmissions), the
	 * secondary gets a new identifier and authenticator */
	memset(&done_seen, 0, sizeof(done_seen));
	egw_radius_send(r, EGW_RADIUS_ACCT_REQUEST, attrs + 20, ap.len - 20, NULL, 0, done_cb, NULL,
			NULL);
	n1 = srv_recv(r, s1, b1, sizeof(b1), &from, 500);
	n2 = srv_recv(r, s1, b2, sizeof(b2), &from, 500);
	CHECK(n1 > 0 && n2 == n1 && b1[0] == EGW_RADIUS_ACCT_REQUEST,
	      "Accounting-Request and its retransmission on the primary");
	CHECK(n1 > 0 &&
		      egw_radius_verify(b1, (size_t)n1, secret, SLEN, NULL, true) == EGW_RADIUS_OK,
	      "Accounting-Request authenticator and MA verify");
	n2 = srv_recv(r, s2, b2, sizeof(b2), &from, 500);
	CHECK(n2 > 0 && b2[0] == EGW_RADIUS_ACCT_REQUEST && memcmp(&b2[4], &b1[4], 16) != 0,
	      "then on the secondary, a new authenticator");
	CHECK(cnt(r, "server_timeouts") == 1 && cnt(r, "failovers") == 1,
	      "server timeout and failover counted");
	/* the secondary answers */
	answer(s2, b2, &from, EGW_RADIUS_ACCT_RESPONSE, false, false);
	poll_done(r, 200);
	CHECK(done_seen.calls == 1 && done_seen.status == 0 &&
		      done_seen.code == EGW_RADIUS_ACCT_RESPONSE,
	      "Accounting-Response from the secondary");
	/* primary dead: the next request goes straight to the secondary */
	memset(&done_seen, 0, sizeof(done_seen));
	egw_radius_send(r, EGW_RADIUS_ACCT_REQUEST, attrs + 20, ap.len - 20, NULL, 0, done_cb, NULL,
			NULL);
	n2 = srv_recv(r, s2, b2, sizeof(b2), &from, 200);
	CHECK(n2 > 0, "with the primary dead the secondary is asked first");
	/* neither answers: probe of the dead primary, once, then a timeout */
	n1 = srv_recv(r, s1, b1, sizeof(b1), &from, 500);
	CHECK(n1 > 0, "the dead primary gets one probe");
	poll_done(r, 300);
	CHECK(done_seen.calls == 1 && done_seen.status == -ETIMEDOUT,
	      "no server answered: -ETIMEDOUT (%d)", done_seen.status);
	CHECK(cnt(r, "no_answer") == 1, "no_answer counted");

	/* the outstanding limit (4) and cancel */
	for (i = 0; i < 4; i++)
		CHECK(egw_radius_send(r, EGW_RADIUS_ACCT_REQUEST, attrs + 20, ap.len - 20, NULL, 0,
				      done_cb, NULL, i == 0 ? &h : NULL) == 0,
		      "request %d in the table", i);
	CHECK(egw_radius_send(r, EGW_RADIUS_ACCT_REQUEST, attrs + 20, ap.len - 20, NULL, 0, done_cb,
			      NULL, NULL) == -ENOSPC &&
		      cnt(r, "outstanding_full") == 1,
	      "fifth refused, counted");
	CHECK(egw_radius_cancel(r, h) == 0 && egw_radius_outstanding(r) == 3, "cancel frees one");
out:
	egw_radius_destroy(r);
	close(s1);
	close(s2);
}

static uint32_t
delay_of(const uint8_t *pkt, size_t len)
{
	uint8_t vl;
	const uint8_t *v = egw_radius_attr_find(pkt, len, EGW_RADIUS_A_ACCT_DELAY_TIME, &vl);
	uint32_t d;

	if (v == NULL || vl != 4)
		return UINT32_MAX;
	memcpy(&d, v, 4);
	return ntohl(d);
}

/* RFC 2866 5.2: Acct-Delay-Time in every Accounting-Request, counted from
 * the event; a retransmission whose value changed has a new Identifier
 * (and so a new Request Authenticator); one whose value did not is the
 * same datagram. */
static void
test_acct_delay(void)
{
	struct egw_radius_server_conf c;
	struct egw_radius *r = egw_radius_create(4);
	uint8_t b1[4096], b2[4096], b3[4096], attrs[64];
	struct egw_radius_pkt ap;
	struct sockaddr_in from;
	uint16_t port;
	int s = udp_server(&port), i;
	ssize_t n1, n2, n3;

	egw_radius_pkt_init(&ap, attrs, sizeof(attrs), 0, 0);
	egw_radius_attr_put_u32(&ap, EGW_RADIUS_A_ACCT_STATUS_TYPE, EGW_RADIUS_ACCT_STOP);
	/* a retransmission within the same second: same value, same datagram */
	server_conf(&c, port, 1, 150, 1);
	egw_radius_server_add(r, &c);
	memset(&done_seen, 0, sizeof(done_seen));
	CHECK(egw_radius_send_acct(r, attrs + 20, ap.len - 20, 0, done_cb, NULL, NULL) == 0,
	      "Accounting-Request about an event now");
	n1 = srv_recv(r, s, b1, sizeof(b1), &from, 500);
	n2 = srv_recv(r, s, b2, sizeof(b2), &from, 500);
	CHECK(n1 > 0 && delay_of(b1, (size_t)n1) == 0, "Acct-Delay-Time 0 at once (%u)",
	      n1 > 0 ? delay_of(b1, (size_t)n1) : 0);
	CHECK(n1 > 0 && n2 == n1 && memcmp(b1, b2, (size_t)n1) == 0,
	      "retransmitted in the same second: the same datagram");
	CHECK(cnt(r, "acct_new_id") == 0, "no new identifier for an unchanged value");
	poll_done(r, 400);
	CHECK(done_seen.calls == 1 && done_seen.status == -ETIMEDOUT, "unanswered: timed out");
	egw_radius_server_del(r, &c.addr);

	/* an event 5 s ago, retransmitted 1.1 s later: 5 then 6, a new id */
	server_conf(&c, port, 1, 1100, 1);
	egw_radius_server_add(r, &c);
	memset(&done_seen, 0, sizeof(done_seen));
	CHECK(egw_radius_send_acct(r, attrs + 20, ap.len - 20, egw_radius_clock_ms() - 5000,
				   done_cb, NULL, NULL) == 0,
	      "Accounting-Request about an event 5 s ago");
	n1 = srv_recv(r, s, b1, sizeof(b1), &from, 500);
	CHECK(n1 > 0 && delay_of(b1, (size_t)n1) == 5, "first transmission: Acct-Delay-Time 5");
	CHECK(n1 > 0 &&
		      egw_radius_verify(b1, (size_t)n1, secret, SLEN, NULL, true) == EGW_RADIUS_OK,
	      "its Request Authenticator verifies");
	n2 = srv_recv(r, s, b2, sizeof(b2), &from, 2000);
	CHECK(n2 > 0 && delay_of(b2, (size_t)n2) == 6, "retransmission: Acct-Delay-Time 6 (%u)",
	      n2 > 0 ? delay_of(b2, (size_t)n2) : 0);
	CHECK(n1 > 0 && n2 > 0 && b2[1] != b1[1] && memcmp(&b2[4], &b1[4], 16) != 0,
	      "a new Identifier and Request Authenticator (RFC 2866 5.2)");
	CHECK(n2 > 0 &&
		      egw_radius_verify(b2, (size_t)n2, secret, SLEN, NULL, true) == EGW_RADIUS_OK,
	      "the retransmission's Request Authenticator verifies");
	CHECK(cnt(r, "acct_new_id") == 1, "counted acct_new_id");
	/* the answer to the first is no longer taken; the second's is */
	if (n1 > 0 && n2 > 0) {
		uint64_t unk = cnt(r, "rx_unknown_id");

		answer(s, b1, &from, EGW_RADIUS_ACCT_RESPONSE, false, false);
		for (i = 0; i < 50; i++) {
			egw_radius_poll(r);
			usleep(1000);
		}
		CHECK(done_seen.calls == 0 && cnt(r, "rx_unknown_id") == unk + 1,
		      "an answer to the old Identifier is dropped");
		answer(s, b2, &from, EGW_RADIUS_ACCT_RESPONSE, false, false);
		poll_done(r, 200);
		CHECK(done_seen.calls == 1 && done_seen.status == 0, "the new one is answered");
	}
	n3 = srv_recv(r, s, b3, sizeof(b3), &from, 50);
	CHECK(n3 < 0, "nothing more sent");
	CHECK(egw_radius_outstanding(r) == 0, "no request left");
	egw_radius_destroy(r);
	close(s);
}

/* More than 256 requests in flight: a second socket (the Identifier is one
 * octet, RFC 2865 3), each answer matched on its own socket. */
#define MANY 300

static void
test_many_outstanding(void)
{
	static uint8_t reqs[MANY][128];
	static struct sockaddr_in froms[MANY];
	struct egw_radius_server_conf c;
	struct egw_radius *r = egw_radius_create(MANY);
	uint16_t port, ports[2] = {0, 0};
	unsigned int per_port[2] = {0, 0}, i, got = 0, bad_port = 0;
	bool seen[2][256];
	uint8_t attrs[64];
	struct egw_radius_pkt ap;
	int s = udp_server(&port), k, rcvbuf = 4 << 20;

	/* all of them are queued before the server reads one */
	setsockopt(s, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	memset(seen, 0, sizeof(seen));
	egw_radius_pkt_init(&ap, attrs, sizeof(attrs), 0, 0);
	egw_radius_attr_put(&ap, EGW_RADIUS_A_USER_NAME, "many", 4);
	server_conf(&c, port, 1, 10000, 0);
	egw_radius_server_add(r, &c);
	memset(&done_seen, 0, sizeof(done_seen));
	for (i = 0; i < MANY; i++)
		if (egw_radius_send(r, EGW_RADIUS_ACCESS_REQUEST, attrs + 20, ap.len - 20,
				    (const uint8_t *)"pw", 2, done_cb, NULL, NULL) != 0)
			break;
	CHECK(i == MANY && egw_radius_outstanding(r) == MANY, "%u requests in flight", i);
	for (i = 0; i < MANY; i++) {
		ssize_t n = srv_recv(r, s, reqs[i], sizeof(reqs[i]), &froms[i], 500);
		uint16_t sp;

		if (n <= 20)
			break;
		got++;
		sp = ntohs(froms[i].sin_port);
		for (k = 0; k < 2; k++)
			if (ports[k] == 0 || ports[k] == sp)
				break;
		if (k == 2) {
			bad_port++;
			continue;
		}
		ports[k] = sp;
		if (!seen[k][reqs[i][1]])
			per_port[k]++;
		seen[k][reqs[i][1]] = true;
	}
	CHECK(got == MANY, "the server got all %u (%u)", MANY, got);
	CHECK(bad_port == 0 && ports[1] != 0, "from two sockets (ports %u and %u)", ports[0],
	      ports[1]);
	CHECK(per_port[0] + per_port[1] == MANY && (per_port[0] == 256 || per_port[1] == 256),
	      "256 Identifiers on one socket, the rest on the other (%u + %u)", per_port[0],
	      per_port[1]);
	/* answered in reverse order: each on the socket and Identifier it came from */
	for (i = got; i-- > 0;)
		answer(s, reqs[i], &froms[i], EGW_RADIUS_ACCESS_ACCEPT, true, false);
	for (i = 0; i < 2000 && done_seen.calls < MANY; i++) {
		egw_radius_poll(r);
		usleep(1000);
	}
	CHECK(done_seen.calls == MANY && cnt(r, "access_accept") == MANY,
	      "every request answered (%d, accepts %lu)", done_seen.calls,
	      (unsigned long)cnt(r, "access_accept"));
	CHECK(cnt(r, "rx_unknown_id") == 0 && cnt(r, "rx_bad_authenticator") == 0,
	      "no answer matched to the wrong request");
	CHECK(egw_radius_outstanding(r) == 0, "none left");
	egw_radius_destroy(r);
	close(s);
}

/* ---------------- DAE ---------------- */

static int dae_calls;

static uint32_t
dae_cb(void *arg, const uint8_t *pkt, size_t len, const struct sockaddr_storage *from)
{
	uint8_t vl;

	(void)arg;
	(void)from;
	dae_calls++;
	if (egw_radius_attr_find(pkt, len, EGW_RADIUS_A_ACCT_SESSION_ID, &vl) == NULL)
		return EGW_RADIUS_ERR_MISSING_ATTRIBUTE;
	return pkt[0] == EGW_RADIUS_COA_REQUEST ? EGW_RADIUS_ERR_SESSION_NOT_FOUND : 0;
}

static void
test_dae(void)
{
	static const uint8_t z16[16];
	struct egw_radius *r = egw_radius_create(4);
	struct sockaddr_storage la, ca;
	struct sockaddr_in *l4 = (struct sockaddr_in *)&la, from;
	uint8_t req[256], rsp[256];
	struct egw_radius_pkt p;
	uint16_t cport;
	int cfd = udp_server(&cport), pfd;
	ssize_t n;
	uint16_t port;
	uint8_t vl;
	const uint8_t *v;

	/* a free port for the listener */
	pfd = udp_server(&port);
	close(pfd);
	memset(&la, 0, sizeof(la));
	l4->sin_family = AF_INET;
	l4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	l4->sin_port = htons(port);
	CHECK(egw_radius_dae_listen(r, &la, dae_cb, NULL) == 0, "DAE listening on %u", port);
	egw_radius_addr_parse("127.0.0.1", 0, &ca);
	CHECK(egw_radius_dae_client_add(r, &ca, secret, SLEN) == 0, "DAE client added");

	egw_radius_pkt_init(&p, req, sizeof(req), EGW_RADIUS_DISCONNECT_REQUEST, 42);
	egw_radius_attr_put(&p, EGW_RADIUS_A_ACCT_SESSION_ID, "0000002a", 8);
	egw_radius_attr_put(&p, EGW_RADIUS_A_MESSAGE_AUTHENTICATOR, z16, 16);
	egw_radius_finish(&p, secret, SLEN, NULL);
	sendto(cfd, req, p.len, 0, (struct sockaddr *)l4, sizeof(*l4));
	n = srv_recv(r, cfd, rsp, sizeof(rsp), &from, 500);
	CHECK(n > 0 && rsp[0] == EGW_RADIUS_DISCONNECT_ACK && rsp[1] == 42,
	      "Disconnect-ACK (%zd, code %u)", n, n > 0 ? rsp[0] : 0);
	CHECK(n > 0 && egw_radius_verify(rsp, (size_t)n, secret, SLEN, &req[4], true) ==
			       EGW_RADIUS_OK,
	      "the ACK's authenticator and MA verify");
	/* the same request again: the cached answer, not run twice */
	sendto(cfd, req, p.len, 0, (struct sockaddr *)l4, sizeof(*l4));
	n = srv_recv(r, cfd, rsp, sizeof(rsp), &from, 500);
	CHECK(n > 0 && rsp[0] == EGW_RADIUS_DISCONNECT_ACK && dae_calls == 1,
	      "retransmission answered from the cache (handler calls %d)", dae_calls);

	/* CoA for no session: NAK with Error-Cause 503 */
	egw_radius_pkt_init(&p, req, sizeof(req), EGW_RADIUS_COA_REQUEST, 43);
	egw_radius_attr_put(&p, EGW_RADIUS_A_ACCT_SESSION_ID, "ffffffff", 8);
	egw_radius_attr_put(&p, EGW_RADIUS_A_MESSAGE_AUTHENTICATOR, z16, 16);
	egw_radius_finish(&p, secret, SLEN, NULL);
	sendto(cfd, req, p.len, 0, (struct sockaddr *)l4, sizeof(*l4));
	n = srv_recv(r, cfd, rsp, sizeof(rsp), &from, 500);
	v = n > 0 ? egw_radius_attr_find(rsp, (size_t)n, EGW_RADIUS_A_ERROR_CAUSE, &vl) : NULL;
	CHECK(n > 0 && rsp[0] == EGW_RADIUS_COA_NAK && v != NULL && vl == 4 && v[2] == 0x01 &&
		      v[3] == 0xf7,
	      "CoA-NAK with Error-Cause 503");

	/* bad secret, no MA, unknown code: silence, each counted */
	egw_radius_pkt_init(&p, req, sizeof(req), EGW_RADIUS_DISCONNECT_REQUEST, 44);
	egw_radius_attr_put(&p, EGW_RADIUS_A_ACCT_SESSION_ID, "0000002a", 8);
	egw_radius_attr_put(&p, EGW_RADIUS_A_MESSAGE_AUTHENTICATOR, z16, 16);
	egw_radius_finish(&p, (const uint8_t *)"wrong", 5, NULL);
	sendto(cfd, req, p.len, 0, (struct sockaddr *)l4, sizeof(*l4));
	egw_radius_pkt_init(&p, req, sizeof(req), EGW_RADIUS_DISCONNECT_REQUEST, 45);
	egw_radius_attr_put(&p, EGW_RADIUS_A_ACCT_SESSION_ID, "0000002a", 8);
	egw_radius_finish(&p, secret, SLEN, NULL);
	sendto(cfd, req, p.len, 0, (struct sockaddr *)l4, sizeof(*l4));
	egw_radius_pkt_init(&p, req, sizeof(req), EGW_RADIUS_ACCESS_REQUEST, 46);
	egw_radius_attr_put(&p, EGW_RADIUS_A_MESSAGE_AUTHENTICATOR, z16, 16);
	egw_radius_finish(&p, secret, SLEN, NULL);
	sendto(cfd, req, p.len, 0, (struct sockaddr *)l4, sizeof(*l4));
	n = srv_recv(r, cfd, rsp, sizeof(rsp), &from, 200);
	CHECK(n < 0, "no answer to a bad secret, a missing MA or an Access-Request");
	CHECK(cnt(r, "dae_bad_authenticator") == 1 && cnt(r, "dae_no_msgauth") == 1 &&
		      cnt(r, "dae_bad_code") == 1,
	      "each counted");
	CHECK(cnt(r, "dae_ack") == 1 && cnt(r, "dae_nak") == 1 && cnt(r, "dae_duplicate") == 1,
	      "ack, nak, duplicate counted");
	egw_radius_destroy(r);
	close(cfd);
}

static void
test_addr(void)
{
	struct sockaddr_storage a;
	char s[64];

	CHECK(egw_radius_addr_parse("127.0.0.1:1812", 1, &a) == 0, "v4:port");
	egw_radius_addr_str(&a, s, sizeof(s));
	CHECK(strcmp(s, "127.0.0.1:1812") == 0, "v4 shown %s", s);
	CHECK(egw_radius_addr_parse("[::1]:3799", 1, &a) == 0 && a.ss_family == AF_INET6, "[v6]:p");
	CHECK(egw_radius_addr_parse("2001:db8::1", 1812, &a) == 0, "bare v6");
	egw_radius_addr_str(&a, s, sizeof(s));
	CHECK(strcmp(s, "[2001:db8::1]:1812") == 0, "v6 shown %s", s);
	CHECK(egw_radius_addr_parse("1.2.3.4:0", 1, &a) == -EINVAL, "port 0 refused");
	CHECK(egw_radius_addr_parse("1.2.3.4:70000", 1, &a) == -EINVAL, "port 70000 refused");
	CHECK(egw_radius_addr_parse("host:1", 1, &a) == -EINVAL, "names refused");
}

int
main(void)
{
	test_rfc2865_examples();
	test_password_lengths();
	test_msgauth();
	test_framing();
	test_authz();
	test_addr();
	test_client();
	test_acct_delay();
	test_many_outstanding();
	test_dae();
	printf("%d checks, %d failures\n", checks, failures);
	return failures != 0;
}
