/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Subscriber table and authentication: PAP (RFC 1334) and CHAP with MD5
 * (RFC 1994), the concentrator being the authenticator.
 *
 * Secrets are compared in constant time (CRYPTO_memcmp) and wiped
 * (OPENSSL_cleanse) when a subscriber is deleted and at shutdown. A failed
 * authentication is answered (PAP Authenticate-Nak, CHAP Failure) and then
 * ends the session: LCP Terminate-Request and a PADT.
 *
 * With an authentication order other than local (aaa.c), a request or
 * response is handed to the AAA hook and answered when its answer comes
 * (ppp_auth_remote_result()); meanwhile the phase timer runs on, repeats of
 * the request are ignored, and no Challenge is sent again.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <rte_random.h>

#include "ppp.h"

#define PAP_AUTH_REQ 1
#define PAP_AUTH_ACK 2
#define PAP_AUTH_NAK 3

#define CHAP_CHALLENGE 1
#define CHAP_RESPONSE 2
#define CHAP_SUCCESS 3
#define CHAP_FAILURE 4
#define CHAP_MD5_LEN 16

static const char pap_msg_ok[] = "Login ok";
static const char pap_msg_fail[] = "Login incorrect";
static const char chap_msg_ok[] = "Welcome";
static const char chap_msg_fail[] = "Authentication failed";

/* ---------------- subscriber table ---------------- */

struct ppp_user {
	struct ppp_user *next;
	uint8_t name_len;
	uint8_t secret_len;
	rte_be32_t addr;
	char name[EGW_PPPOE_NAME_MAX + 1];
	char filter_set[EGW_PPPOE_NAME_MAX + 1]; /* "": none */
	uint8_t secret[EGW_PPPOE_NAME_MAX];
};

#define USER_BUCKETS 1024 /* chained; a lookup per authentication */

static struct ppp_user *users[USER_BUCKETS];
static unsigned int nb_users;

static unsigned int
user_hash(const uint8_t *name, size_t len)
{
	uint32_t h = 2166136261u; /* FNV-1a */
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ name[i]) * 16777619u;
	return h % USER_BUCKETS;
}

static struct ppp_user *
user_find(const uint8_t *name, size_t len)
{
	struct ppp_user *u;

	for (u = users[user_hash(name, len)]; u != NULL; u = u->next)
		if (u->name_len == len && memcmp(u->name, name, len) == 0)
			return u;
	return NULL;
}

static void
user_free(struct ppp_user *u)
{
	OPENSSL_cleanse(u, sizeof(*u));
	free(u);
}

int
egw_pppoe_user_add(const char *name, const char *secret, rte_be32_t addr)
{
	size_t nl, sl;
	struct ppp_user *u;
	unsigned int b, i;
	uint32_t a = rte_be_to_cpu_32(addr);
	int rc;

	if (name == NULL || secret == NULL)
		return -EINVAL;
	nl = strnlen(name, EGW_PPPOE_NAME_MAX + 1);
	sl = strnlen(secret, EGW_PPPOE_NAME_MAX + 1);
	if (nl == 0 || nl > EGW_PPPOE_NAME_MAX || sl == 0 || sl > EGW_PPPOE_NAME_MAX)
		return -EINVAL;
	/* a unicast host address: not 0.x, loopback, multicast or broadcast */
	if (addr != 0 && ((a >> 24) == 0 || (a >> 24) == 127 || (a >> 28) >= 14))
		return -EINVAL;
	if (user_find((const uint8_t *)name, nl) != NULL)
		return -EEXIST;
	if (addr != 0) {
		for (i = 0; i < USER_BUCKETS; i++)
			for (u = users[i]; u != NULL; u = u->next)
				if (u->addr == addr)
					return -EEXIST;
		/* in a pool it must be free now; it is reserved when the
		 * subscriber's IPCP runs, not here */
		rc = pppoe_pool4_reserve(addr);
		if (rc < 0)
			return -EEXIST;
		if (rc == 0)
			pppoe_pool4_release(addr);
	}
	u = calloc(1, sizeof(*u));
	if (u == NULL)
		return -ENOSPC;
	memcpy(u->name, name, nl);
	u->name_len = (uint8_t)nl;
	memcpy(u->secret, secret, sl);
	u->secret_len = (uint8_t)sl;
	u->addr = addr;
	b = user_hash((const uint8_t *)name, nl);
	u->next = users[b];
	users[b] = u;
	nb_users++;
	return 0;
}

int
egw_pppoe_user_del(const char *name)
{
	struct ppp_user **pp, *u;
	size_t nl;

	if (name == NULL)
		return -ENOENT;
	nl = strnlen(name, EGW_PPPOE_NAME_MAX + 1);
	for (pp = &users[user_hash((const uint8_t *)name, nl)]; *pp != NULL; pp = &(*pp)->next) {
		u = *pp;
		if (u->name_len == nl && memcmp(u->name, name, nl) == 0) {
			*pp = u->next;
			user_free(u);
			nb_users--;
			return 0;
		}
	}
	return -ENOENT;
}

int
egw_pppoe_user_set_filter_set(const char *name, const char *set)
{
	struct ppp_user *u;

	if (name == NULL)
		return -ENOENT;
	u = user_find((const uint8_t *)name, strnlen(name, EGW_PPPOE_NAME_MAX + 1));
	if (u == NULL)
		return -ENOENT;
	if (set == NULL)
		set = "";
	if (set[0] != '\0' && !egw_pppoe_filter_set_exists(set))
		return -ESRCH;
	snprintf(u->filter_set, sizeof(u->filter_set), "%s", set);
	return 0;
}

bool
ppp_users_name_set(const char *set)
{
	const struct ppp_user *u;
	unsigned int i;

	for (i = 0; i < USER_BUCKETS; i++)
		for (u = users[i]; u != NULL; u = u->next)
			if (strcmp(u->filter_set, set) == 0)
				return true;
	return false;
}

unsigned int
ppp_users_count(void)
{
	return nb_users;
}

void
ppp_users_fini(void)
{
	struct ppp_user *u, *n;
	unsigned int i;

	for (i = 0; i < USER_BUCKETS; i++) {
		for (u = users[i]; u != NULL; u = n) {
			n = u->next;
			user_free(u);
		}
		users[i] = NULL;
	}
	nb_users = 0;
}

/* ---------------- common ---------------- */

static void
auth_timeout_cb(struct rte_timer *t, void *arg)
{
	struct ppp_sess *ps = arg;

	RTE_SET_USED(t);
	if (ps->stopped || ps->authenticated || ps->phase != PPP_PHASE_AUTH)
		return;
	PPPOE_CNT_INC(AUTH_TIMEOUT);
	ppp_sess_terminate(ps->s, EGW_PPPOE_CAUSE_AUTH_FAIL);
}

static void
chap_send_challenge(struct ppp_sess *ps)
{
	uint8_t buf[1 + sizeof(ps->chap_chal) + EGW_PPPOE_NAME_MAX];
	size_t nl = strnlen(pppoe_g.conf.ac_name, EGW_PPPOE_NAME_MAX);

	/* RFC 1994 4.1: Value-Size, Value, Name (ours) */
	buf[0] = sizeof(ps->chap_chal);
	memcpy(&buf[1], ps->chap_chal, sizeof(ps->chap_chal));
	memcpy(&buf[1 + sizeof(ps->chap_chal)], pppoe_g.conf.ac_name, nl);
	ppp_send(ps, PPP_CHAP, CHAP_CHALLENGE, ps->chap_id, buf,
		 (uint16_t)(1 + sizeof(ps->chap_chal) + nl));
}

static void
chap_timer_cb(struct rte_timer *t, void *arg)
{
	struct ppp_sess *ps = arg;

	RTE_SET_USED(t);
	if (ps->stopped || ps->authenticated || ps->phase != PPP_PHASE_AUTH)
		return;
	/* the Challenge (or the peer's Response) was lost: the same Challenge
	 * again, Max-Configure times at most */
	if (++ps->chap_tries >= PPP_MAX_CONFIGURE) {
		PPPOE_CNT_INC(AUTH_TIMEOUT);
		ppp_sess_terminate(ps->s, EGW_PPPOE_CAUSE_AUTH_FAIL);
		return;
	}
	chap_send_challenge(ps);
	ppp_timer_arm(ps, &ps->chap_timer, ppp_timing.restart_ms, chap_timer_cb, ps);
}

void
ppp_auth_start(struct ppp_sess *ps)
{
	ps->authenticated = false;
	ppp_timer_arm(ps, &ps->auth_timer, ppp_timing.auth_ms, auth_timeout_cb, ps);
	if (ps->auth != EGW_PPPOE_AUTH_CHAP)
		return; /* PAP: the peer speaks first */
	/* RFC 1994 2.3: a new Identifier and an unpredictable Value each time */
	ps->chap_id = (uint8_t)(ps->chap_id + 1 + (rte_rand() & 0x7f));
	if (RAND_bytes(ps->chap_chal, sizeof(ps->chap_chal)) != 1) {
		/* no challenge we could stand behind: refuse rather than guess */
		PPPOE_LOG(ERR, "session %u: RAND_bytes failed", ps->s->sid);
		ppp_sess_terminate(ps->s, EGW_PPPOE_CAUSE_AUTH_FAIL);
		return;
	}
	ps->chap_tries = 0;
	chap_send_challenge(ps);
	ppp_timer_arm(ps, &ps->chap_timer, ppp_timing.restart_ms, chap_timer_cb, ps);
}

void
ppp_auth_stop(struct ppp_sess *ps)
{
	rte_timer_stop(&ps->auth_timer);
	rte_timer_stop(&ps->chap_timer);
}

/*
 * A name accepted: the same name as before if this is a new authentication
 * of the same link (LCP renegotiated), since addresses were given to it.
 */
static bool
auth_user_ok(struct ppp_sess *ps, const struct ppp_user *u)
{
	if (u == NULL)
		return false;
	if (ps->user[0] != '\0' && strcmp(ps->user, u->name) != 0)
		return false;
	return true;
}

static void
auth_success(struct ppp_sess *ps, const struct ppp_user *u)
{
	bool first = !ps->authenticated;

	ps->authenticated = true;
	memcpy(ps->user, u->name, u->name_len + 1);
	ps->user_addr = u->addr;
	/* the set exists: it cannot be emptied while a user names it */
	memcpy(ps->filter_set, u->filter_set, sizeof(ps->filter_set));
	ppp_auth_stop(ps);
	if (first && ps->phase == PPP_PHASE_AUTH)
		ppp_phase_network(ps);
}

/* header of a PAP/CHAP packet: Length checked; returns data length or -1 */
static int
auth_hdr(const uint8_t *p, uint16_t len)
{
	uint16_t plen;

	if (len < PPP_HDR_LEN)
		return -1;
	plen = (uint16_t)(p[2] << 8 | p[3]);
	if (plen < PPP_HDR_LEN || plen > len)
		return -1;
	return plen - PPP_HDR_LEN;
}

/* ---------------- PAP ---------------- */

static void
pap_reply(struct ppp_sess *ps, uint8_t code, uint8_t id, const char *msg)
{
	uint8_t buf[256];
	size_t ml = strnlen(msg, 253);

	buf[0] = (uint8_t)ml;
	memcpy(&buf[1], msg, ml);
	ppp_send(ps, PPP_PAP, code, id, buf, (uint16_t)(ml + 1));
}

void
ppp_pap_input(struct ppp_sess *ps, const uint8_t *p, uint16_t len)
{
	const uint8_t *d = p + PPP_HDR_LEN, *name, *pw;
	const struct ppp_user *u;
	uint8_t nl, pl;
	bool ok;
	int dl;

	dl = auth_hdr(p, len);
	if (dl < 0) {
		PPPOE_CNT_INC(PAP_MALFORMED);
		return;
	}
	if (p[0] != PAP_AUTH_REQ) {
		/* Ack and Nak go from authenticator to peer, never to us */
		PPPOE_CNT_INC(AUTH_DISCARD);
		return;
	}
	/* RFC 1334 2.2.1: Peer-ID Length, Peer-Id, Passwd-Length, Password */
	if (dl < 1 || d[0] + 2 > dl || d[0] + 2 + d[1 + d[0]] > dl) {
		PPPOE_CNT_INC(PAP_MALFORMED);
		return;
	}
	nl = d[0];
	name = &d[1];
	pl = d[1 + nl];
	pw = &d[2 + nl];

	if (ps->aaa_cookie != 0) {
		/* the peer repeats itself while the server thinks */
		PPPOE_CNT_INC(AUTH_PENDING_DUP);
		return;
	}
	if (!ps->authenticated && pppoe_aaa_remote()) {
		int rc = ppp_aaa_start(ps, p[1], name, nl, pw, pl);

		if (rc > 0)
			return;
		if (rc < 0) {
			PPPOE_CNT_INC(PAP_FAIL);
			pap_reply(ps, PAP_AUTH_NAK, p[1], pap_msg_fail);
			ppp_sess_terminate(ps->s, EGW_PPPOE_CAUSE_AUTH_FAIL);
			return;
		}
	}
	if (ps->authenticated && ps->aaa_seen) {
		/* our Ack of a remote answer was lost: the same name is acked
		 * again, without asking the server twice */
		if (nl == strlen(ps->user) && memcmp(name, ps->user, nl) == 0)
			pap_reply(ps, PAP_AUTH_ACK, p[1], pap_msg_ok);
		else
			PPPOE_CNT_INC(AUTH_DISCARD);
		return;
	}

	u = user_find(name, nl);
	ok = auth_user_ok(ps, u) && pl == u->secret_len && CRYPTO_memcmp(pw, u->secret, pl) == 0;
	if (!ok) {
		PPPOE_CNT_INC(PAP_FAIL);
		pap_reply(ps, PAP_AUTH_NAK, p[1], pap_msg_fail);
		ppp_sess_terminate(ps->s, EGW_PPPOE_CAUSE_AUTH_FAIL);
		return;
	}
	/* a retransmission (our Ack was lost) is acked again, counted once */
	if (!ps->authenticated)
		PPPOE_CNT_INC(PAP_OK);
	pap_reply(ps, PAP_AUTH_ACK, p[1], pap_msg_ok);
	auth_success(ps, u);
}

/* ---------------- CHAP-MD5 ---------------- */

/* RFC 1994 4.1 with MD5: MD5(Identifier || secret || Challenge) */
static bool
chap_md5(uint8_t id, const struct ppp_user *u, const uint8_t chal[16], uint8_t out[16])
{
	uint8_t buf[1 + EGW_PPPOE_NAME_MAX + 16];
	unsigned int olen = 0;
	size_t n = 0;
	int rc;

	buf[n++] = id;
	memcpy(&buf[n], u->secret, u->secret_len);
	n += u->secret_len;
	memcpy(&buf[n], chal, 16);
	n += 16;
	rc = EVP_Digest(buf, n, out, &olen, EVP_md5(), NULL);
	OPENSSL_cleanse(buf, sizeof(buf));
	return rc == 1 && olen == CHAP_MD5_LEN;
}

static void
chap_reply_msg(struct ppp_sess *ps, uint8_t code, uint8_t id, const char *msg)
{
	if (msg == NULL)
		msg = code == CHAP_SUCCESS ? chap_msg_ok : chap_msg_fail;
	ppp_send(ps, PPP_CHAP, code, id, msg, (uint16_t)strnlen(msg, 253));
}

static void
chap_reply(struct ppp_sess *ps, uint8_t code, uint8_t id)
{
	chap_reply_msg(ps, code, id, NULL);
}

void
ppp_chap_input(struct ppp_sess *ps, const uint8_t *p, uint16_t len)
{
	const uint8_t *d = p + PPP_HDR_LEN;
	const struct ppp_user *u;
	uint8_t expect[CHAP_MD5_LEN];
	uint8_t vs;
	int dl, nl;
	bool ok;

	dl = auth_hdr(p, len);
	if (dl < 0) {
		PPPOE_CNT_INC(CHAP_MALFORMED);
		return;
	}
	if (p[0] != CHAP_RESPONSE) {
		/* we do not answer Challenges (we are not authenticated), and
		 * Success/Failure are ours to send */
		PPPOE_CNT_INC(AUTH_DISCARD);
		return;
	}
	/* RFC 1994 4.1: Value-Size, Value, Name (the rest) */
	if (dl < 1 || 1 + d[0] > dl) {
		PPPOE_CNT_INC(CHAP_MALFORMED);
		return;
	}
	if (p[1] != ps->chap_id) {
		PPPOE_CNT_INC(CHAP_BAD_ID);
		return;
	}
	/* RFC 1994 4.2: a Response to the Challenge already answered gets the
	 * same reply again (our Success may have been lost) */
	if (ps->authenticated) {
		chap_reply(ps, CHAP_SUCCESS, p[1]);
		return;
	}
	vs = d[0];
	nl = dl - 1 - vs;
	if (ps->aaa_cookie != 0) {
		PPPOE_CNT_INC(AUTH_PENDING_DUP);
		return;
	}
	if (pppoe_aaa_remote()) {
		int rc = -1;

		if (vs == CHAP_MD5_LEN && nl >= 1 && nl <= EGW_PPPOE_NAME_MAX)
			rc = ppp_aaa_start(ps, p[1], &d[1 + vs], (uint8_t)nl, &d[1], vs);
		if (rc > 0) {
			/* answered: the Challenge is not sent again meanwhile */
			rte_timer_stop(&ps->chap_timer);
			return;
		}
		if (rc < 0) {
			PPPOE_CNT_INC(CHAP_FAIL);
			chap_reply(ps, CHAP_FAILURE, p[1]);
			ppp_sess_terminate(ps->s, EGW_PPPOE_CAUSE_AUTH_FAIL);
			return;
		}
	}
	u = nl <= EGW_PPPOE_NAME_MAX ? user_find(&d[1 + vs], (size_t)nl) : NULL;
	ok = auth_user_ok(ps, u) && vs == CHAP_MD5_LEN &&
	     chap_md5(p[1], u, ps->chap_chal, expect) &&
	     CRYPTO_memcmp(expect, &d[1], CHAP_MD5_LEN) == 0;
	/* the expected response is as good as the secret for this challenge */
	OPENSSL_cleanse(expect, sizeof(expect));
	if (!ok) {
		PPPOE_CNT_INC(CHAP_FAIL);
		chap_reply(ps, CHAP_FAILURE, p[1]);
		ppp_sess_terminate(ps->s, EGW_PPPOE_CAUSE_AUTH_FAIL);
		return;
	}
	PPPOE_CNT_INC(CHAP_OK);
	chap_reply(ps, CHAP_SUCCESS, p[1]);
	auth_success(ps, u);
}

/* ---------------- remote answers (aaa.c) ---------------- */

void
ppp_auth_remote_result(struct ppp_sess *ps, bool ok, const char *msg)
{
	bool pap = ps->auth == EGW_PPPOE_AUTH_PAP;
	size_t nl = strnlen(ps->aaa_user, EGW_PPPOE_NAME_MAX);

	if (!ok) {
		if (pap) {
			PPPOE_CNT_INC(PAP_FAIL);
			pap_reply(ps, PAP_AUTH_NAK, ps->aaa_id, msg != NULL ? msg : pap_msg_fail);
		} else {
			PPPOE_CNT_INC(CHAP_FAIL);
			chap_reply_msg(ps, CHAP_FAILURE, ps->aaa_id, msg);
		}
		ppp_sess_terminate(ps->s, EGW_PPPOE_CAUSE_AUTH_FAIL);
		return;
	}
	/* a new authentication of the same link must be the same name */
	if (ps->user[0] != '\0' && strcmp(ps->user, ps->aaa_user) != 0) {
		ppp_auth_remote_result(ps, false, NULL);
		return;
	}
	if (pap) {
		PPPOE_CNT_INC(PAP_OK);
		pap_reply(ps, PAP_AUTH_ACK, ps->aaa_id, msg != NULL ? msg : pap_msg_ok);
	} else {
		PPPOE_CNT_INC(CHAP_OK);
		chap_reply_msg(ps, CHAP_SUCCESS, ps->aaa_id, msg);
	}
	memcpy(ps->user, ps->aaa_user, nl + 1);
	ps->authenticated = true;
	ppp_auth_stop(ps);
	if (ps->phase == PPP_PHASE_AUTH)
		ppp_phase_network(ps);
}

void
ppp_auth_local_fallback(struct ppp_sess *ps)
{
	size_t nl = strnlen(ps->aaa_user, EGW_PPPOE_NAME_MAX);
	const struct ppp_user *u = user_find((const uint8_t *)ps->aaa_user, nl);
	uint8_t expect[CHAP_MD5_LEN];
	bool ok;

	if (ps->auth == EGW_PPPOE_AUTH_PAP) {
		ok = auth_user_ok(ps, u) && ps->aaa_cred_len == u->secret_len &&
		     CRYPTO_memcmp(ps->aaa_cred, u->secret, u->secret_len) == 0;
	} else {
		ok = auth_user_ok(ps, u) && ps->aaa_cred_len == CHAP_MD5_LEN &&
		     chap_md5(ps->aaa_id, u, ps->chap_chal, expect) &&
		     CRYPTO_memcmp(expect, ps->aaa_cred, CHAP_MD5_LEN) == 0;
		OPENSSL_cleanse(expect, sizeof(expect));
	}
	if (ok) {
		ps->user_addr = u->addr;
		memcpy(ps->filter_set, u->filter_set, sizeof(ps->filter_set));
	}
	ppp_auth_remote_result(ps, ok, NULL);
}
