/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: PPP control (lib/pppoe fsm.c, lcp.c, auth.c, ipcp.c,
 * ipv6cp.c, ppp.c) on one session of an initialised library.
 *
 * Each input is a program of operations on a fresh session (created with
 * pppoe_sess_create() and started, as a PADR would):
 *   0  a PPP frame (protocol field and payload from the input) to ppp_input()
 *   1  the same as an Ethernet frame through lib/eth and egw_pppoe_input(),
 *      with a PPPoE length from the input (possibly wrong) and padding
 *   2  a timer of the session expires (restart timers, keepalive, LCP
 *      Establish deadline, authentication, CHAP retransmission, NCP
 *      timeout, RA)
 *   3  a well-formed answer that takes the session further: an Ack of our
 *      last LCP/IPCP/IPv6CP request, a peer request, PAP or CHAP with a
 *      valid or wrong secret, a Router Solicitation
 *   4  configuration: authentication method of the next session, keepalive,
 *      DNS servers, a subscriber added or deleted
 *   5  the session cleared, or a new one started
 * Every frame the library sends goes through tx_check(): Ethernet addresses,
 * PPPoE version/type/code, PPPoE length = bytes present, PPP Length field =
 * bytes present for control protocols, IPv6 length and ICMPv6 checksum for
 * router advertisements. The session is freed at the end of each input and
 * no mbuf may be left over.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_rcu_qsbr.h>
#include <rte_timer.h>

#include "egw_eth.h"
#include "egw_pppoe.h"
#include "pppoe_private.h"
#include "ppp.h"
#include "fuzz_common.h"
#include "fuzz_eal.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NB_MBUF 1023
#define FRAME_MAX 2048

static struct rte_mempool *pool;
static struct rte_rcu_qsbr *qsbr;
static struct egw_eth_port eth_port;
static const struct rte_ether_addr port_mac = {{0x02, 0x00, 0x00, 0x00, 0x00, 0x01}};
static const struct rte_ether_addr client_mac = {{0x02, 0x11, 0x22, 0x33, 0x44, 0x55}};
static unsigned int frames_sent;

static uint16_t
be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static bool
ctrl_proto(uint16_t proto)
{
	return proto == PPP_LCP || proto == PPP_PAP || proto == PPP_CHAP || proto == PPP_IPCP ||
	       proto == PPP_IPV6CP;
}

/* ICMPv6 checksum over the pseudo-header and the message: 0xffff if valid */
static uint16_t
icmp6_sum(const uint8_t *ip6, const uint8_t *icmp, uint32_t len)
{
	uint32_t sum = 0, i;

	for (i = 8; i < 40; i += 2)
		sum += be16(&ip6[i]);
	sum += len >> 16;
	sum += len & 0xffff;
	sum += 58;
	for (i = 0; i + 1 < len; i += 2)
		sum += be16(&icmp[i]);
	if (len & 1)
		sum += (uint32_t)icmp[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/* Every frame the library sends: well-formed, then freed. */
static void
tx_check(uint16_t port, struct rte_mbuf *m, void *arg)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t len = m->pkt_len;
	uint16_t etype, plen;

	RTE_SET_USED(arg);
	frames_sent++;
	FUZZ_ASSERT(port == 0 && m->nb_segs == 1 && m->data_len == len, "frame layout");
	FUZZ_ASSERT(len >= 20, "frame of %u bytes", len);
	FUZZ_ASSERT(memcmp(p, &client_mac, 6) == 0 && memcmp(p + 6, &port_mac, 6) == 0,
		    "Ethernet addresses");
	etype = be16(p + 12);
	FUZZ_ASSERT(etype == 0x8863 || etype == 0x8864, "ethertype %#x", etype);
	FUZZ_ASSERT(p[14] == PPPOE_VER_TYPE, "PPPoE version/type %#x", p[14]);
	plen = be16(p + 18);
	FUZZ_ASSERT(plen == len - 20, "PPPoE length %u for %u bytes", plen, len - 20);
	if (etype == 0x8863) {
		FUZZ_ASSERT(p[15] == PPPOE_CODE_PADT, "discovery code %#x from PPP", p[15]);
	} else {
		uint16_t proto;

		FUZZ_ASSERT(p[15] == 0 && plen >= 2, "session frame code %#x length %u", p[15],
			    plen);
		proto = be16(p + 20);
		plen -= 2;
		p += 22;
		if (ctrl_proto(proto)) {
			FUZZ_ASSERT(plen >= 4 && be16(p + 2) == plen,
				    "protocol %#x: PPP length %u for %u bytes", proto,
				    plen >= 4 ? be16(p + 2) : 0, plen);
			FUZZ_ASSERT(plen <= 1500 - 2, "PPP packet of %u bytes", plen);
		} else {
			/* the control path sends only router advertisements */
			FUZZ_ASSERT(proto == PPP_IPV6 && plen >= 48 && be16(p + 4) == plen - 40 &&
					    p[6] == 58 && p[7] == 255 && p[40] == 134 &&
					    icmp6_sum(p, p + 40, plen - 40u) == 0xffff,
				    "data frame %#x from the control path", proto);
		}
	}
	rte_pktmbuf_free(m);
}

static void
lib_setup(void)
{
	struct egw_pppoe_params prm;
	char err[128];

	memset(&prm, 0, sizeof(prm));
	prm.qsbr = qsbr;
	prm.pool = pool;
	prm.max_sessions = 8;
	prm.nb_ctx = 1;
	prm.tx = tx_check;
	prm.socket = SOCKET_ID_ANY;
	if (egw_pppoe_init(&prm) != 0 || egw_pppoe_port_add(0, &port_mac, 1500) != 0 ||
	    egw_pppoe_pool_add("10.0.0.0/24", err, sizeof(err)) != 0 ||
	    egw_pppoe_pool_add("2001:db8::/48", err, sizeof(err)) != 0 ||
	    egw_pppoe_user_add("alice", "s3cret", 0) != 0 ||
	    egw_pppoe_user_add("bob", "pw", RTE_BE32(0x0a00004d)) != 0) {
		fprintf(stderr, "fuzz_pppoe_ppp: library set-up failed\n");
		abort();
	}
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	RTE_SET_USED(argc);
	if (fuzz_eal_init((*argv)[0]) < 0) {
		fprintf(stderr, "fuzz_pppoe_ppp: rte_eal_init: %s\n", rte_strerror(rte_errno));
		abort();
	}
	pool = rte_pktmbuf_pool_create("fuzz_ppp", NB_MBUF, 0, 0, RTE_PKTMBUF_HEADROOM + FRAME_MAX,
				       rte_socket_id());
	qsbr = rte_zmalloc(NULL, rte_rcu_qsbr_get_memsize(1), RTE_CACHE_LINE_SIZE);
	if (pool == NULL || qsbr == NULL || rte_rcu_qsbr_init(qsbr, 1) != 0 ||
	    egw_eth_init() != 0) {
		fprintf(stderr, "fuzz_pppoe_ppp: cannot set up mbufs, QSBR or lib/eth\n");
		abort();
	}
	eth_port.mac = port_mac;
	lib_setup();
	return 0;
}

/* ---- operations ----------------------------------------------------------- */

static struct pppoe_sess *
sess_start(struct in *in)
{
	enum pppoe_refuse why;
	struct pppoe_sess *s;
	uint16_t maxp = (in_u8(in) & 1) ? 1500 : 0; /* RFC 4638 granted, or not */

	s = pppoe_sess_create(0, &client_mac, 0, NULL, NULL, maxp, &why);
	FUZZ_ASSERT(s != NULL, "session refused (%d)", why);
	FUZZ_ASSERT(ppp_sess_start(s) == 0, "ppp_sess_start");
	return s;
}

static void
sess_gone(struct pppoe_sess *s)
{
	if (s->state != EGW_PPPOE_S_FREE && s->state != EGW_PPPOE_S_CLOSING)
		pppoe_sess_close(s, EGW_PPPOE_CAUSE_ADMIN, true);
	/* no readers registered: the grace period is over at once */
	egw_pppoe_service();
	FUZZ_ASSERT(s->state == EGW_PPPOE_S_FREE && s->ppp == NULL, "session not freed");
}

static void
op_ppp(struct pppoe_sess *s, struct in *in)
{
	static uint8_t buf[FRAME_MAX];
	uint16_t n = (uint16_t)in_uint(in, 1);

	if (n > in->n)
		n = (uint16_t)in->n;
	/* protocol and payload exactly as in the input (1- or 2-byte protocol) */
	memcpy(buf, in->p, n);
	in->p += n;
	in->n -= n;
	/* a copy of exactly n bytes: the sanitizer sees any read beyond */
	{
		uint8_t *p = malloc(n + 1u);

		FUZZ_ASSERT(p != NULL, "malloc");
		memcpy(p, buf, n);
		ppp_input(s, p, n);
		free(p);
	}
}

static void
op_eth(struct pppoe_sess *s, struct in *in)
{
	struct rte_mbuf *m;
	uint8_t flags = in_u8(in);
	uint16_t n = (uint16_t)in_uint(in, 1), pad = flags & 0x1f, len;
	uint8_t vt = (flags & 0x80) ? in_u8(in) : PPPOE_VER_TYPE;
	uint8_t code = (flags & 0x40) ? in_u8(in) : 0;
	uint8_t *p;

	/* the PPPoE length: right, or from the input (too long, too short) */
	len = (flags & 0x20) ? (uint16_t)in_uint(in, 2) : 0;
	if (n > in->n)
		n = (uint16_t)in->n;
	if (!(flags & 0x20))
		len = n;
	m = rte_pktmbuf_alloc(pool);
	if (m == NULL)
		return;
	p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)(20 + n + pad));
	FUZZ_ASSERT(p != NULL, "append");
	memcpy(p, &port_mac, 6);
	memcpy(p + 6, &client_mac, 6);
	p[12] = 0x88;
	p[13] = 0x64;
	p[14] = vt;
	p[15] = code;
	p[16] = (uint8_t)(s->sid >> 8);
	p[17] = (uint8_t)s->sid;
	p[18] = (uint8_t)(len >> 8);
	p[19] = (uint8_t)len;
	memcpy(p + 20, in->p, n);
	in->p += n;
	in->n -= n;
	memset(p + 20 + n, 0xa5, pad);
	m->port = 0;
	if (egw_eth_classify_burst(&eth_port, &m, 1) == 1)
		egw_pppoe_input(m); /* consumes m */
	else
		rte_pktmbuf_free(m);
}

/* a timer of the session fires now: stop it, then run its callback */
static void
op_timer(struct pppoe_sess *s, struct in *in)
{
	struct ppp_sess *ps = s->ppp;
	struct rte_timer *t;

	if (ps == NULL)
		return;
	switch (in_u8(in) % 9) {
	case 0: t = &ps->lcp.timer; break;
	case 1: t = &ps->ipcp.timer; break;
	case 2: t = &ps->ipv6cp.timer; break;
	case 3: t = &ps->echo_timer; break;
	case 4: t = &ps->auth_timer; break;
	case 5: t = &ps->chap_timer; break;
	case 6: t = &ps->ncp_timer; break;
	case 7: t = &ps->ra_timer; break;
	default: t = &ps->lcp_timer; break;
	}
	if (!rte_timer_pending(t))
		return;
	rte_timer_stop(t);
	t->f(t, t->arg);
	/* anything the callback closed is freed at once */
	egw_pppoe_service();
}

static void
send_ack(struct pppoe_sess *s, struct ppp_fsm *f, uint16_t proto)
{
	uint8_t b[2 + 4 + sizeof(f->req)];
	uint16_t n = (uint16_t)(4 + f->req_len);

	b[0] = (uint8_t)(proto >> 8);
	b[1] = (uint8_t)proto;
	b[2] = PPP_CODE_CONF_ACK;
	b[3] = f->req_id;
	b[4] = (uint8_t)(n >> 8);
	b[5] = (uint8_t)n;
	memcpy(&b[6], f->req, f->req_len);
	ppp_input(s, b, (uint16_t)(n + 2));
}

static void
send_hex(struct pppoe_sess *s, const uint8_t *b, uint16_t n)
{
	ppp_input(s, b, n);
}

static void
op_answer(struct pppoe_sess *s, struct in *in)
{
	/* protocol field included */
	static const uint8_t lcp_req[] = {0xc0, 0x21, 1, 1, 0,    14,   1,    4,
					  5,    0xd4, 5, 6, 0x11, 0x22, 0x33, 0x44};
	static const uint8_t ipcp_req[] = {0x80, 0x21, 1, 1, 0, 10, 3, 6, 0, 0, 0, 0};
	static const uint8_t ipv6cp_req[] = {0x80, 0x57, 1,    1,    0,    14,   1,    10,
					     0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88};
	static const uint8_t pap_ok[] = {0xc0, 0x23, 1, 7,   0,   17,  5,   'a', 'l', 'i',
					 'c',  'e',  6, 's', '3', 'c', 'r', 'e', 't'};
	static const uint8_t pap_bob[] = {0xc0, 0x23, 1, 8, 0, 11, 3, 'b', 'o', 'b', 2, 'p', 'w'};
	struct ppp_sess *ps = s->ppp;
	uint8_t op = in_u8(in);

	if (ps == NULL)
		return;
	switch (op % 10) {
	case 0: send_ack(s, &ps->lcp, PPP_LCP); break;
	case 1: send_hex(s, lcp_req, sizeof(lcp_req)); break;
	case 2:
		send_hex(s, (op & 0x10) ? pap_bob : pap_ok,
			 (op & 0x10) ? sizeof(pap_bob) : sizeof(pap_ok));
		break;
	case 3: {
		/* CHAP Response to the current Challenge, right or wrong secret */
		const char *sec = (op & 0x10) ? "wrong" : "s3cret";
		uint8_t b[64], md[EVP_MAX_MD_SIZE], pre[1 + 16 + 16];
		unsigned int ml = 0, sl = (unsigned int)strlen(sec);

		pre[0] = ps->chap_id;
		memcpy(&pre[1], sec, sl);
		memcpy(&pre[1 + sl], ps->chap_chal, 16);
		if (EVP_Digest(pre, 1 + sl + 16, md, &ml, EVP_md5(), NULL) != 1 || ml != 16)
			break;
		b[0] = 0xc2;
		b[1] = 0x23;
		b[2] = 2;
		b[3] = ps->chap_id;
		b[4] = 0;
		b[5] = 4 + 1 + 16 + 5;
		b[6] = 16;
		memcpy(&b[7], md, 16);
		memcpy(&b[23], "alice", 5);
		ppp_input(s, b, 28);
		break;
	}
	case 4: send_ack(s, &ps->ipcp, PPP_IPCP); break;
	case 5: {
		uint8_t b[sizeof(ipcp_req)];

		/* the peer asks for 0.0.0.0, or for what it was given */
		memcpy(b, ipcp_req, sizeof(b));
		if (op & 0x10)
			memcpy(&b[8], &ps->addr, 4);
		send_hex(s, b, sizeof(b));
		break;
	}
	case 6: send_ack(s, &ps->ipv6cp, PPP_IPV6CP); break;
	case 7: send_hex(s, ipv6cp_req, sizeof(ipv6cp_req)); break;
	case 8: {
		/* a Router Solicitation with a valid checksum */
		uint8_t b[2 + 48];
		uint16_t ck;

		memset(b, 0, sizeof(b));
		b[0] = 0x00;
		b[1] = 0x57;
		b[2] = 0x60;
		b[7] = 8;
		b[8] = 58;
		b[9] = (op & 0x10) ? 64 : 255;
		b[10] = 0xfe;
		b[11] = 0x80;
		b[25] = 0x01;
		b[26] = 0xff;
		b[27] = 0x02;
		b[41] = 0x02;
		b[42] = 133;
		ck = (uint16_t)~icmp6_sum(&b[2], &b[42], 8);
		b[44] = (uint8_t)(ck >> 8);
		b[45] = (uint8_t)ck;
		ppp_input(s, b, sizeof(b));
		break;
	}
	default: {
		/* LCP Echo-Request */
		static const uint8_t echo[] = {0xc0, 0x21, 9, 3, 0, 8, 1, 2, 3, 4};

		send_hex(s, echo, sizeof(echo));
		break;
	}
	}
}

static void
op_conf(struct in *in)
{
	static const char *const names[] = {"u0", "u1", "u2", "u3"};
	uint8_t op = in_u8(in), v = in_u8(in);

	switch (op % 5) {
	case 0: egw_pppoe_set_auth((enum egw_pppoe_auth)(v % 3)); break;
	case 1: egw_pppoe_set_keepalive(v & 1, 1 + (v >> 1) % 3); break;
	case 2:
		egw_pppoe_set_dns((v & 1) ? RTE_BE32(0x08080808) : 0,
				  (v & 2) ? RTE_BE32(0x01010101) : 0);
		break;
	case 3:
		egw_pppoe_user_add(names[v % 4], (v & 4) ? "s3cret" : "x",
				   (v & 8) ? RTE_BE32(0x0a000064 + (v % 4)) : 0);
		break;
	default: egw_pppoe_user_del(names[v % 4]); break;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = {.p = data, .n = size};
	struct pppoe_sess *s;
	unsigned int ops = 0, i;
	unsigned int avail = rte_mempool_avail_count(pool);

	/* the same starting point for every input */
	egw_pppoe_set_auth(EGW_PPPOE_AUTH_PAP);
	egw_pppoe_set_keepalive(0, 3);
	egw_pppoe_set_dns(0, 0);
	frames_sent = 0;
	s = sess_start(&in);
	while (in.n > 0 && ops++ < 256) {
		switch (in_u8(&in) % 6) {
		case 0: op_ppp(s, &in); break;
		case 1: op_eth(s, &in); break;
		case 2: op_timer(s, &in); break;
		case 3: op_answer(s, &in); break;
		case 4: op_conf(&in); break;
		default:
			if (in_u8(&in) & 1) {
				egw_pppoe_session_clear(s->sid);
			} else {
				sess_gone(s);
				s = sess_start(&in);
			}
			break;
		}
		/* a closed session stays closed: start another */
		if (s->state == EGW_PPPOE_S_CLOSING || s->state == EGW_PPPOE_S_FREE) {
			sess_gone(s);
			s = sess_start(&in);
		}
	}
	sess_gone(s);
	for (i = 0; i < 4; i++) {
		static const char *const names[] = {"u0", "u1", "u2", "u3"};

		egw_pppoe_user_del(names[i]);
	}
	FUZZ_ASSERT(pppoe_sess_count() == 0, "%u sessions left", pppoe_sess_count());
	FUZZ_ASSERT(rte_mempool_avail_count(pool) == avail, "mbufs leaked: %u of %u",
		    rte_mempool_avail_count(pool), avail);
	return 0;
}
