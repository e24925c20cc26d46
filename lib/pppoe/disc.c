/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * PPPoE discovery, access-concentrator side (RFC 2516 section 5, RFC 4638).
 *
 *   PADI -> PADO   stateless: nothing is kept for a PADI. The PADO carries an
 *                  AC-Cookie that proves, in the PADR, that the client saw
 *                  our PADO from its own MAC on this port and these VLANs.
 *   PADR -> PADS   cookie checked, service checked, session created, PPP
 *                  started.
 *   PADT           from the client: the session ends; to the client: when
 *                  the session ends here.
 *
 * Every frame is checked in a fixed order and each rejection has its own
 * counter (pppoe_cnt_disc.def). Nothing past the PPPoE length is read: the
 * bytes behind it are Ethernet padding.
 *
 * Policy where RFC 2516 leaves a choice:
 *  - a PADI asking for a service we do not serve gets no PADO (section 5.2:
 *    the AC may choose not to answer); neither does any PADI while the
 *    session limit is reached: a client that cannot get a session should
 *    find another concentrator rather than fail later;
 *  - a PADR without a valid cookie is dropped without a reply: it is not an
 *    answer to one of our PADOs (or it is older than two secret rotations),
 *    and a reply would let spoofed PADRs make us send frames to third parties;
 *  - a PADR for a service we do not serve gets a PADS with session id 0 and
 *    Service-Name-Error, one refused by a session limit a PADS with session id
 *    0 and AC-System-Error (section 5.4);
 *  - an AC-Cookie opens one session: every accepted cookie is remembered
 *    (in the table of its secret's epoch, emptied when that secret retires,
 *    so as long as the cookie could be valid); a PADR carrying a cookie
 *    already used is a repeat when it matches the first (same Host-Uniq)
 *    within PADR_RESEND_S seconds and that session has received nothing yet:
 *    the same PADS is sent again; any other use is refused without a reply.
 *    A full table refuses the PADR (fail closed), counted.
 *
 * Floods (the guard, egw_pppoe_set_guard()): PADIs and PADRs are limited
 * by token buckets, one over all clients and one per client MAC, checked
 * before the tags are parsed; no PADO while max_starting sessions are still
 * negotiating, and a PADR then gets a refusing PADS. A MAC whose login
 * failed is held (no PADO, no PADS) for 1 s, doubling with each further
 * failure up to auth_fail_hold_s, until a session of it binds. Per-MAC
 * state is a fixed array of MAC_SLOTS slots indexed by a keyed hash of the
 * MAC (secret drawn at start): memory does not grow with the number of MACs
 * a flood uses, and an attacker cannot aim at a victim's slot; two MACs that
 * share a slot share its buckets.
 *
 * AC cookie: epoch byte || 4-byte nonce || first 16 bytes of
 * HMAC-SHA256(secret[epoch], epoch || nonce || client MAC || port || number
 * of tags || VLAN ids). The nonce counts PADOs, so each PADO carries its own
 * cookie and each cookie opens one session. The secret is
 * drawn with RAND_bytes and replaced every COOKIE_ROTATE_S seconds; the
 * previous one is still accepted, so a cookie lives between one and two
 * rotation periods. Cookies are compared in constant time.
 */
#include <errno.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_ether.h>
#include <rte_hash.h>
#include <rte_jhash.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "pppoe_private.h"

#define COOKIE_ROTATE_S 60
#define COOKIE_KEY_LEN 32
#define COOKIE_MAC_LEN 16
#define COOKIE_NONCE_LEN 4
#define COOKIE_LEN (1 + COOKIE_NONCE_LEN + COOKIE_MAC_LEN)

/* 9216: the largest frame an access port takes (as in ctl.c) */
#define DISC_SCRATCH 9216
/* Most bytes of PPPoE header and tags in a reply: it must fit a client on a
 * standard 1500-byte link, whatever our port's MTU. */
#define REPLY_MAX RTE_ETHER_MTU

/* PADR retransmission: a used cookie's session (see the top of the file) */
#define PADR_RESEND_S 30
/* Used cookies per secret epoch: more than the default PADR rate accepts
 * in one rotation period (2,000/s x 60 s) */
#define USED_COOKIES 131072
/* Per-MAC guard slots (power of two) */
#define MAC_SLOTS 65536
/* First hold after a failed login; doubles with each further failure */
#define AUTH_HOLD_FIRST_S 1

/* Error texts of refusing PADSs (RFC 2516 A: UTF-8, for people) */
#define PADS_ERR_SERVICE "service not offered"
#define PADS_ERR_LIMIT "session limit reached"
#define PADS_ERR_PER_MAC "too many sessions for this MAC"
#define PADS_ERR_STARTING "too many sessions starting, try again"
#define PADS_ERR_MAX (sizeof(PADS_ERR_STARTING) - 1)

static struct {
	uint8_t key[2][COOKIE_KEY_LEN]; /* key[gen & 1] current, the other the previous */
	uint32_t gen;
	uint32_t nonce;    /* of the next cookie */
	uint64_t last_tsc; /* last rotation */
	bool ready;
} ck;

/* What a used cookie opened (the data of its entry in ck_used[]). */
struct cookie_use {
	uint64_t tsc;     /* when */
	uint64_t hu_hash; /* Host-Uniq of the PADR (hash of length and value) */
	uint16_t sid;
};

/* Used cookies of the two live epochs: ck_used[epoch & 1] */
static struct rte_hash *ck_used[2];
static struct cookie_use *ck_use_data[2]; /* indexed by key position */

/* Per-MAC guard state (GCRA: theoretical arrival times) */
struct mac_slot {
	uint64_t padi_tat, padr_tat;
	uint64_t hold_until; /* tsc; 0: not held */
	uint32_t fails;      /* failed logins since the last bind */
};

static struct {
	struct mac_slot *slot; /* MAC_SLOTS */
	uint32_t seed;
	uint64_t padi_tat, padr_tat; /* all clients */
} guard;

static uint8_t disc_scratch[DISC_SCRATCH] __rte_cache_aligned;

static inline uint16_t
get_be16(const uint8_t *p)
{
	rte_be16_t v;

	memcpy(&v, p, sizeof(v));
	return rte_be_to_cpu_16(v);
}

static inline void
put_be16(uint8_t *p, uint16_t v)
{
	rte_be16_t b = rte_cpu_to_be_16(v);

	memcpy(p, &b, sizeof(b));
}

/* ---- tags ---------------------------------------------------------------- */

enum pppoe_tag_err
pppoe_tags_parse(const uint8_t *p, uint16_t len, struct pppoe_tags *t)
{
	uint32_t off = 0;

	memset(t, 0, sizeof(*t));
	while (off < len) {
		uint16_t type, tlen;
		const uint8_t *v;

		if (len - off < 4)
			return PPPOE_TAG_TRUNCATED;
		type = get_be16(p + off);
		tlen = get_be16(p + off + 2);
		if (len - off - 4 < tlen)
			return PPPOE_TAG_TRUNCATED;
		v = p + off + 4;
		off += 4u + tlen;
		t->nb_tags++;
		switch (type) {
		case PPPOE_TAG_END_OF_LIST:
			/* RFC 2516: its length MUST be zero; nothing after it is read */
			return tlen == 0 ? PPPOE_TAG_OK : PPPOE_TAG_BAD_LEN;
		case PPPOE_TAG_SERVICE_NAME:
			if (t->has_service)
				return PPPOE_TAG_DUPLICATE;
			t->has_service = true;
			t->service = v;
			t->service_len = tlen;
			break;
		case PPPOE_TAG_AC_NAME:
			/* only ACs send it; the first one is kept */
			if (t->ac_name == NULL) {
				t->ac_name = v;
				t->ac_name_len = tlen;
			}
			break;
		case PPPOE_TAG_HOST_UNIQ:
			if (t->host_uniq != NULL)
				return PPPOE_TAG_DUPLICATE;
			t->host_uniq = v;
			t->host_uniq_len = tlen;
			break;
		case PPPOE_TAG_AC_COOKIE:
			if (t->cookie != NULL)
				return PPPOE_TAG_DUPLICATE;
			t->cookie = v;
			t->cookie_len = tlen;
			break;
		case PPPOE_TAG_RELAY_SESSION_ID:
			if (t->relay_id != NULL)
				return PPPOE_TAG_DUPLICATE;
			t->relay_id = v;
			t->relay_id_len = tlen;
			break;
		case PPPOE_TAG_PPP_MAX_PAYLOAD:
			if (t->has_max_payload)
				return PPPOE_TAG_DUPLICATE;
			if (tlen != 2)
				return PPPOE_TAG_BAD_LEN;
			t->has_max_payload = true;
			t->max_payload = get_be16(v);
			break;
		case PPPOE_TAG_SERVICE_NAME_ERROR:
		case PPPOE_TAG_AC_SYSTEM_ERROR:
		case PPPOE_TAG_GENERIC_ERROR: t->has_error = true; break;
		default:
			/* Vendor-Specific and unknown tags: skipped (RFC 2516 A) */
			break;
		}
	}
	return PPPOE_TAG_OK;
}

/* A reply under construction: PPPoE header then tags, bounded by max. */
struct reply {
	uint8_t *p;
	uint16_t len;
	uint16_t max;
	bool overflow;
};

static void
tag_put(struct reply *r, uint16_t type, const void *v, uint16_t vlen)
{
	if (r->overflow || (uint32_t)r->len + 4 + vlen > r->max) {
		r->overflow = true;
		return;
	}
	put_be16(r->p + r->len, type);
	put_be16(r->p + r->len + 2, vlen);
	if (vlen != 0)
		memcpy(r->p + r->len + 4, v, vlen);
	r->len = (uint16_t)(r->len + 4 + vlen);
}

/* Where a reply goes: back to the sender, on the tags it came with. */
struct peer {
	/* 8-aligned: hash functions read keys as words (rte_hash_crc) */
	struct rte_ether_addr mac __rte_aligned(8);
	uint16_t port;
	uint8_t n_vlan;
	uint16_t tci[2];
	rte_be16_t tpid[2];
	uint16_t vid[2];
};

static struct rte_mbuf *
reply_start(const struct peer *pe, uint8_t code, uint16_t sid, struct reply *r)
{
	struct rte_mbuf *m;
	struct pppoe_hdr h;
	uint8_t *p;

	m = pppoe_frame_alloc(pe->port, &pe->mac, pe->n_vlan, pe->tci, pe->tpid,
			      EGW_ETHER_TYPE_PPPOE_DISC, &p);
	if (m == NULL)
		return NULL;
	h.ver_type = PPPOE_VER_TYPE;
	h.code = code;
	h.sid = rte_cpu_to_be_16(sid);
	h.len = 0;
	memcpy(p, &h, sizeof(h));
	r->p = p;
	r->len = PPPOE_HDR_LEN;
	r->max = REPLY_MAX;
	r->overflow = false;
	return m;
}

/* Set the PPPoE length and send; false (frame freed, counted) on overflow. */
static bool
reply_send(const struct peer *pe, struct rte_mbuf *m, struct reply *r)
{
	if (r->overflow) {
		rte_pktmbuf_free(m);
		PPPOE_CNT_INC(DISC_REPLY_TOO_LONG);
		return false;
	}
	put_be16(r->p + 4, (uint16_t)(r->len - PPPOE_HDR_LEN));
	pppoe_frame_send(pe->port, m, r->len);
	return true;
}

/* The client's tags every reply echoes verbatim (RFC 2516 A). */
static void
echo_tags(struct reply *r, const struct pppoe_tags *t)
{
	if (t->host_uniq != NULL)
		tag_put(r, PPPOE_TAG_HOST_UNIQ, t->host_uniq, t->host_uniq_len);
	if (t->relay_id != NULL)
		tag_put(r, PPPOE_TAG_RELAY_SESSION_ID, t->relay_id, t->relay_id_len);
}

/* ---- cookies --------------------------------------------------------------- */

/* The MAC part of a cookie whose epoch byte and nonce are c[0..4]. */
static void
cookie_mac(const uint8_t key[COOKIE_KEY_LEN], const uint8_t *c, const struct peer *pe,
	   uint8_t out[COOKIE_MAC_LEN])
{
	uint8_t msg[1 + COOKIE_NONCE_LEN + RTE_ETHER_ADDR_LEN + 2 + 1 + 4];
	uint8_t md[EVP_MAX_MD_SIZE], *p = msg + 1 + COOKIE_NONCE_LEN;
	unsigned int mdlen = 0;

	memcpy(msg, c, 1 + COOKIE_NONCE_LEN);
	memcpy(p, pe->mac.addr_bytes, RTE_ETHER_ADDR_LEN);
	put_be16(p + 6, pe->port);
	p[8] = pe->n_vlan;
	put_be16(p + 9, pe->vid[0]);
	put_be16(p + 11, pe->vid[1]);
	if (HMAC(EVP_sha256(), key, COOKIE_KEY_LEN, msg, sizeof(msg), md, &mdlen) == NULL ||
	    mdlen < COOKIE_MAC_LEN) {
		/* never matches a cookie we made: all zero vs. an HMAC */
		memset(out, 0, COOKIE_MAC_LEN);
		return;
	}
	memcpy(out, md, COOKIE_MAC_LEN);
	OPENSSL_cleanse(md, sizeof(md));
}

static void
cookie_make(const struct peer *pe, uint8_t out[COOKIE_LEN])
{
	out[0] = (uint8_t)ck.gen;
	memcpy(out + 1, &ck.nonce, COOKIE_NONCE_LEN);
	ck.nonce++;
	cookie_mac(ck.key[ck.gen & 1], out, pe, out + 1 + COOKIE_NONCE_LEN);
}

static bool
cookie_ok(const struct peer *pe, const uint8_t *c, uint16_t len)
{
	uint8_t want[COOKIE_MAC_LEN];
	uint32_t gen;

	if (len != COOKIE_LEN)
		return false;
	if (c[0] == (uint8_t)ck.gen)
		gen = ck.gen;
	else if (c[0] == (uint8_t)(ck.gen - 1))
		gen = ck.gen - 1;
	else
		return false;
	cookie_mac(ck.key[gen & 1], c, pe, want);
	return CRYPTO_memcmp(want, c + 1 + COOKIE_NONCE_LEN, COOKIE_MAC_LEN) == 0;
}

int
pppoe_disc_init(void)
{
	unsigned int i;

	memset(&ck, 0, sizeof(ck));
	/* both: a cookie of "the previous epoch" right after start must fail too */
	if (RAND_bytes(ck.key[0], COOKIE_KEY_LEN) != 1 ||
	    RAND_bytes(ck.key[1], COOKIE_KEY_LEN) != 1) {
		OPENSSL_cleanse(&ck, sizeof(ck));
		PPPOE_LOG(ERR, "cannot draw the AC cookie secret");
		return -EIO;
	}
	ck.gen = 1;
	ck.last_tsc = rte_rdtsc();
	ck.ready = true;
	for (i = 0; i < 2; i++) {
		char name[RTE_HASH_NAMESIZE];
		struct rte_hash_parameters hp = {
			.name = name,
			.entries = USED_COOKIES,
			.key_len = COOKIE_LEN,
			.hash_func = rte_jhash,
			.socket_id = pppoe_g.socket,
		};

		snprintf(name, sizeof(name), "egw_pppoe_ck%u", i);
		ck_used[i] = rte_hash_create(&hp);
		if (ck_used[i] == NULL)
			goto nomem;
		ck_use_data[i] = rte_zmalloc_socket("egw_pppoe_ck_use",
						    ((size_t)rte_hash_max_key_id(ck_used[i]) + 1) *
							    sizeof(struct cookie_use),
						    0, pppoe_g.socket);
		if (ck_use_data[i] == NULL)
			goto nomem;
	}
	guard.slot = rte_zmalloc_socket("egw_pppoe_guard", MAC_SLOTS * sizeof(struct mac_slot),
					RTE_CACHE_LINE_SIZE, pppoe_g.socket);
	if (guard.slot == NULL || RAND_bytes((uint8_t *)&guard.seed, sizeof(guard.seed)) != 1)
		goto nomem;
	guard.padi_tat = guard.padr_tat = 0;
	return 0;
nomem:
	PPPOE_LOG(ERR, "discovery: no memory for the used-cookie tables or the guard");
	pppoe_disc_fini();
	return -ENOMEM;
}

void
pppoe_disc_fini(void)
{
	unsigned int i;

	OPENSSL_cleanse(&ck, sizeof(ck));
	for (i = 0; i < 2; i++) {
		rte_hash_free(ck_used[i]);
		ck_used[i] = NULL;
		rte_free(ck_use_data[i]);
		ck_use_data[i] = NULL;
	}
	rte_free(guard.slot);
	memset(&guard, 0, sizeof(guard));
}

unsigned int
pppoe_disc_service(uint64_t now_tsc)
{
	uint64_t period = rte_get_tsc_hz() * COOKIE_ROTATE_S;

	/* signed: a clock behind the last rotation is not "due" */
	if (!ck.ready || (int64_t)(now_tsc - ck.last_tsc) < (int64_t)period)
		return 0;
	/* the new key replaces the one before the current (cookies 1..2 periods old) */
	if (RAND_bytes(ck.key[(ck.gen + 1) & 1], COOKIE_KEY_LEN) != 1) {
		PPPOE_LOG(WARNING, "cannot draw a new AC cookie secret; keeping the current one");
		ck.last_tsc = now_tsc;
		return 0;
	}
	ck.gen++;
	ck.last_tsc = now_tsc;
	/* the cookies the table of this parity remembers were made with the
	 * key just replaced: none of them can be valid any more */
	rte_hash_reset(ck_used[ck.gen & 1]);
	return 1;
}

/* ---- the guard ------------------------------------------------------------------- */

static struct mac_slot *
mac_slot(const struct rte_ether_addr *mac)
{
	uint8_t k[8] __rte_aligned(8) = {0};

	/* aligned for rte_jhash's word loads (a session's MAC is not) */
	memcpy(k, mac->addr_bytes, RTE_ETHER_ADDR_LEN);
	return &guard.slot[rte_jhash(k, RTE_ETHER_ADDR_LEN, guard.seed) & (MAC_SLOTS - 1)];
}

/* Token bucket as GCRA: rate per second, a burst of one second's worth.
 * true (and the token taken) if one more may pass now. */
static bool
rate_take(uint64_t *tat, uint64_t now, unsigned int rate)
{
	uint64_t iv = rte_get_tsc_hz() / rate, t = RTE_MAX(*tat, now);

	if (t - now > iv * (rate - 1))
		return false;
	*tat = t + iv;
	return true;
}

/* The per-MAC then the global bucket of PADIs (padi) or PADRs; false with
 * the reason counted. A held MAC passes neither. */
static bool
guard_pass(const struct peer *pe, bool padi, uint64_t now)
{
	const struct pppoe_conf *c = &pppoe_g.conf;
	struct mac_slot *sl = mac_slot(&pe->mac);

	if (sl->hold_until != 0 && (int64_t)(sl->hold_until - now) > 0) {
		PPPOE_CNT_INC(DISC_AUTH_HOLD);
		return false;
	}
	if (padi) {
		if (!rate_take(&sl->padi_tat, now, c->padi_rate_mac)) {
			PPPOE_CNT_INC(DISC_PADI_RATE_MAC);
			return false;
		}
		if (!rate_take(&guard.padi_tat, now, c->padi_rate)) {
			PPPOE_CNT_INC(DISC_PADI_RATE);
			return false;
		}
		return true;
	}
	if (!rate_take(&sl->padr_tat, now, c->padr_rate_mac)) {
		PPPOE_CNT_INC(DISC_PADR_RATE_MAC);
		return false;
	}
	if (!rate_take(&guard.padr_tat, now, c->padr_rate)) {
		PPPOE_CNT_INC(DISC_PADR_RATE);
		return false;
	}
	return true;
}

void
pppoe_disc_guard_reset(void)
{
	guard.padi_tat = guard.padr_tat = 0;
}

void
pppoe_disc_login_failed(const struct rte_ether_addr *mac)
{
	struct mac_slot *sl;
	uint64_t hold;

	if (guard.slot == NULL)
		return;
	sl = mac_slot(mac);
	if (sl->fails < UINT32_MAX)
		sl->fails++;
	hold = (uint64_t)AUTH_HOLD_FIRST_S << RTE_MIN(sl->fails - 1, 20u);
	hold = RTE_MIN(hold, (uint64_t)pppoe_g.conf.auth_hold_s);
	sl->hold_until = rte_rdtsc() + hold * rte_get_tsc_hz();
	if (sl->hold_until == 0)
		sl->hold_until = 1;
}

void
pppoe_disc_login_ok(const struct rte_ether_addr *mac)
{
	struct mac_slot *sl;

	if (guard.slot == NULL)
		return;
	sl = mac_slot(mac);
	sl->fails = 0;
	sl->hold_until = 0;
}

/* ---- replies ----------------------------------------------------------------- */

static bool
service_served(const struct pppoe_tags *t)
{
	const struct pppoe_conf *c = &pppoe_g.conf;
	unsigned int i;

	/* empty request: any service; no service configured: any name */
	if (t->service_len == 0 || c->nb_services == 0)
		return true;
	for (i = 0; i < c->nb_services; i++)
		if (strlen(c->services[i]) == t->service_len &&
		    memcmp(c->services[i], t->service, t->service_len) == 0)
			return true;
	return false;
}

/* RFC 4638: above 1492 only when the client asks and the port carries it. */
static uint16_t
max_payload_grant(const struct pppoe_tags *t, uint16_t port)
{
	uint32_t cap = (uint32_t)pppoe_g.ports[port].mtu - PPPOE_HDR_LEN - 2;

	if (!t->has_max_payload || t->max_payload <= EGW_PPPOE_MRU_DEF || cap <= EGW_PPPOE_MRU_DEF)
		return 0;
	cap = RTE_MIN(cap, (uint32_t)EGW_PPPOE_MRU_MAX);
	return (uint16_t)RTE_MIN((uint32_t)t->max_payload, cap);
}

static void
send_pado(const struct peer *pe, const struct pppoe_tags *t)
{
	const struct pppoe_conf *c = &pppoe_g.conf;
	uint8_t cookie[COOKIE_LEN];
	struct rte_mbuf *m;
	struct reply r;
	uint16_t mp;
	unsigned int i;

	m = reply_start(pe, PPPOE_CODE_PADO, 0, &r);
	if (m == NULL)
		return;
	tag_put(&r, PPPOE_TAG_AC_NAME, c->ac_name, (uint16_t)strlen(c->ac_name));
	/* RFC 2516 5.2: the Service-Name of the PADI first, then (for an empty
	 * request) the services we offer */
	tag_put(&r, PPPOE_TAG_SERVICE_NAME, t->service, t->service_len);
	if (t->service_len == 0)
		for (i = 0; i < c->nb_services; i++)
			tag_put(&r, PPPOE_TAG_SERVICE_NAME, c->services[i],
				(uint16_t)strlen(c->services[i]));
	echo_tags(&r, t);
	cookie_make(pe, cookie);
	tag_put(&r, PPPOE_TAG_AC_COOKIE, cookie, sizeof(cookie));
	mp = max_payload_grant(t, pe->port);
	if (mp != 0) {
		uint8_t v[2];

		put_be16(v, mp);
		tag_put(&r, PPPOE_TAG_PPP_MAX_PAYLOAD, v, sizeof(v));
	}
	if (reply_send(pe, m, &r))
		PPPOE_CNT_INC(PADO_TX);
}

/*
 * PADS: sid != 0 opens the session (with the granted PPP-Max-Payload, 0 for
 * none); sid 0 refuses it with the error tag err_tag and its text.
 */
static bool
send_pads(const struct peer *pe, const struct pppoe_tags *t, uint16_t sid, uint16_t mp,
	  uint16_t err_tag, const char *err)
{
	struct rte_mbuf *m;
	struct reply r;

	m = reply_start(pe, PPPOE_CODE_PADS, sid, &r);
	if (m == NULL)
		return false;
	tag_put(&r, PPPOE_TAG_SERVICE_NAME, t->service, t->service_len);
	if (err != NULL)
		tag_put(&r, err_tag, err, (uint16_t)strlen(err));
	echo_tags(&r, t);
	if (mp != 0) {
		uint8_t v[2];

		put_be16(v, mp);
		tag_put(&r, PPPOE_TAG_PPP_MAX_PAYLOAD, v, sizeof(v));
	}
	if (!reply_send(pe, m, &r))
		return false;
	if (sid != 0)
		PPPOE_CNT_INC(PADS_TX);
	return true;
}

int
pppoe_disc_send_padt(struct pppoe_sess *s, const char *error)
{
	struct rte_mbuf *m;
	struct reply r;
	struct peer pe;

	pe.port = s->port;
	pe.mac = s->mac;
	pe.n_vlan = s->n_vlan;
	pe.tci[0] = s->tci[0];
	pe.tci[1] = s->tci[1];
	pe.tpid[0] = s->tpid[0];
	pe.tpid[1] = s->tpid[1];
	m = reply_start(&pe, PPPOE_CODE_PADT, s->sid, &r);
	if (m == NULL)
		return -ENOMEM;
	if (error != NULL)
		tag_put(&r, PPPOE_TAG_GENERIC_ERROR, error,
			(uint16_t)strnlen(error, EGW_PPPOE_NAME_MAX * 4));
	if (!reply_send(&pe, m, &r))
		return -EINVAL;
	PPPOE_CNT_INC(PADT_TX);
	return 0;
}

/* ---- used cookies ------------------------------------------------------------ */

/* (rte_jhash reads words: the tags lie anywhere in the frame, so hashed
 * values are copied to aligned buffers first) */
static uint64_t
hu_hash(const struct pppoe_tags *t)
{
	uint32_t len = t->host_uniq != NULL ? RTE_MIN(t->host_uniq_len, (uint16_t)REPLY_MAX) : 0;
	uint8_t buf[REPLY_MAX] __rte_aligned(8);

	if (len == 0)
		return 0;
	memcpy(buf, t->host_uniq, len);
	return (uint64_t)len << 32 | rte_jhash(buf, len, guard.seed);
}

/* The cookie, aligned for the hash. */
struct cookie_key {
	uint8_t b[COOKIE_LEN];
} __rte_aligned(8);

static struct cookie_key
cookie_key(const uint8_t *cookie)
{
	struct cookie_key k;

	memcpy(k.b, cookie, COOKIE_LEN);
	return k;
}

/* What the cookie (checked valid) opened before, or NULL. */
static struct cookie_use *
cookie_used(const uint8_t *cookie)
{
	struct cookie_key k = cookie_key(cookie);
	unsigned int e = k.b[0] & 1;
	int32_t pos = rte_hash_lookup(ck_used[e], k.b);

	return pos >= 0 ? &ck_use_data[e][pos] : NULL;
}

/* Remember a cookie as used; NULL if its table is full. */
static struct cookie_use *
cookie_use(const uint8_t *cookie, const struct pppoe_tags *t, uint64_t now)
{
	struct cookie_key k = cookie_key(cookie);
	unsigned int e = k.b[0] & 1;
	int32_t pos = rte_hash_add_key(ck_used[e], k.b);
	struct cookie_use *u;

	if (pos < 0)
		return NULL;
	u = &ck_use_data[e][pos];
	u->tsc = now;
	u->hu_hash = hu_hash(t);
	u->sid = 0;
	return u;
}

static void
cookie_unuse(const uint8_t *cookie)
{
	struct cookie_key k = cookie_key(cookie);

	rte_hash_del_key(ck_used[k.b[0] & 1], k.b);
}

/* A PADR with a used cookie: the session it repeats the PADR of (the same
 * client, Host-Uniq and session, which has received nothing yet), or NULL. */
static struct pppoe_sess *
padr_repeat(const struct peer *pe, const struct pppoe_tags *t, const struct cookie_use *u,
	    uint64_t now)
{
	struct pppoe_sess *s;

	if (u->hu_hash != hu_hash(t) || now - u->tsc > rte_get_tsc_hz() * PADR_RESEND_S)
		return NULL;
	s = pppoe_sess_get(u->sid);
	if (s != NULL && s->state == EGW_PPPOE_S_NEGOTIATING && s->ctrl_rx == 0 &&
	    s->port == pe->port && rte_is_same_ether_addr(&s->mac, &pe->mac))
		return s;
	return NULL;
}

/* ---- input ------------------------------------------------------------------- */

static bool
tags_ok(const uint8_t *p, uint16_t len, struct pppoe_tags *t)
{
	switch (pppoe_tags_parse(p, len, t)) {
	case PPPOE_TAG_OK: return true;
	case PPPOE_TAG_TRUNCATED: PPPOE_CNT_INC(DISC_TAG_TRUNCATED); break;
	case PPPOE_TAG_DUPLICATE: PPPOE_CNT_INC(DISC_TAG_DUPLICATE); break;
	case PPPOE_TAG_BAD_LEN: PPPOE_CNT_INC(DISC_TAG_BAD_LEN); break;
	}
	return false;
}

static void
padi_input(const struct peer *pe, const uint8_t *dst, uint16_t sid, const uint8_t *tags,
	   uint16_t len)
{
	const struct pppoe_port *pt = &pppoe_g.ports[pe->port];
	struct pppoe_tags t;

	PPPOE_CNT_INC(PADI_RX);
	/* RFC 2516 5.1: to the broadcast address; a client that knows us may
	 * also send it to our MAC */
	if (!rte_is_broadcast_ether_addr((const struct rte_ether_addr *)dst) &&
	    !rte_is_same_ether_addr((const struct rte_ether_addr *)dst, &pt->mac)) {
		PPPOE_CNT_INC(DISC_PADI_BAD_DST);
		return;
	}
	if (sid != 0) {
		PPPOE_CNT_INC(DISC_PADI_SID);
		return;
	}
	if (!guard_pass(pe, true, rte_rdtsc()))
		return;
	if (!tags_ok(tags, len, &t))
		return;
	if (!t.has_service) {
		/* RFC 2516 5.1: exactly one Service-Name */
		PPPOE_CNT_INC(DISC_NO_SERVICE);
		return;
	}
	if (!service_served(&t)) {
		PPPOE_CNT_INC(DISC_SERVICE_UNKNOWN);
		return;
	}
	if (pppoe_sess_count() >= pppoe_g.conf.max_sessions) {
		PPPOE_CNT_INC(DISC_PADI_FULL);
		return;
	}
	if (pppoe_sess_starting() >= pppoe_g.conf.max_starting) {
		PPPOE_CNT_INC(DISC_PADI_STARTING);
		return;
	}
	send_pado(pe, &t);
}

static void
padr_input(const struct peer *pe, const uint8_t *dst, uint16_t sid, const uint8_t *tags,
	   uint16_t len)
{
	const struct pppoe_port *pt = &pppoe_g.ports[pe->port];
	uint64_t now = rte_rdtsc();
	enum pppoe_refuse why = PPPOE_REFUSE_NONE;
	struct cookie_use *u;
	struct pppoe_sess *s;
	struct pppoe_tags t;
	uint16_t mp, n;

	PPPOE_CNT_INC(PADR_RX);
	/* RFC 2516 5.3: unicast to the AC that sent the PADO */
	if (!rte_is_same_ether_addr((const struct rte_ether_addr *)dst, &pt->mac)) {
		PPPOE_CNT_INC(DISC_PADR_BAD_DST);
		return;
	}
	if (sid != 0) {
		PPPOE_CNT_INC(DISC_PADR_SID);
		return;
	}
	if (!guard_pass(pe, false, now))
		return;
	if (!tags_ok(tags, len, &t))
		return;
	if (!t.has_service) {
		PPPOE_CNT_INC(DISC_NO_SERVICE);
		return;
	}
	if (t.cookie == NULL) {
		PPPOE_CNT_INC(DISC_NO_COOKIE);
		return;
	}
	if (!cookie_ok(pe, t.cookie, t.cookie_len)) {
		PPPOE_CNT_INC(DISC_BAD_COOKIE);
		return;
	}
	/* a PADS that cannot carry the client's tags back is never sent: open
	 * nothing (the worst case: the longer of the two error texts) */
	if (PPPOE_HDR_LEN + 4u + t.service_len + 4u + PADS_ERR_MAX +
		    (t.host_uniq != NULL ? 4u + t.host_uniq_len : 0) +
		    (t.relay_id != NULL ? 4u + t.relay_id_len : 0) + 6u >
	    REPLY_MAX) {
		PPPOE_CNT_INC(DISC_REPLY_TOO_LONG);
		return;
	}
	u = cookie_used(t.cookie);
	if (u != NULL) {
		s = padr_repeat(pe, &t, u, now);
		if (s == NULL) {
			/* one session per cookie */
			PPPOE_CNT_INC(DISC_COOKIE_REUSED);
			return;
		}
		PPPOE_CNT_INC(PADS_RESENT);
		send_pads(pe, &t, s->sid, s->max_payload, 0, NULL);
		return;
	}
	if (!service_served(&t)) {
		PPPOE_CNT_INC(DISC_PADR_SERVICE_UNKNOWN);
		send_pads(pe, &t, 0, 0, PPPOE_TAG_SERVICE_NAME_ERROR, PADS_ERR_SERVICE);
		return;
	}
	u = cookie_use(t.cookie, &t, now);
	if (u == NULL) {
		PPPOE_CNT_INC(DISC_COOKIE_TABLE_FULL);
		return;
	}
	mp = max_payload_grant(&t, pe->port);
	s = pppoe_sess_create(pe->port, &pe->mac, pe->n_vlan, pe->tci, pe->tpid, mp, &why);
	if (s == NULL) {
		/* a repeat of this PADR is refused again, with a PADS */
		cookie_unuse(t.cookie);
		switch (why) {
		case PPPOE_REFUSE_PER_MAC:
			PPPOE_CNT_INC(DISC_LIMIT_PER_MAC);
			send_pads(pe, &t, 0, 0, PPPOE_TAG_AC_SYSTEM_ERROR, PADS_ERR_PER_MAC);
			break;
		case PPPOE_REFUSE_STARTING:
			PPPOE_CNT_INC(DISC_LIMIT_STARTING);
			send_pads(pe, &t, 0, 0, PPPOE_TAG_AC_SYSTEM_ERROR, PADS_ERR_STARTING);
			break;
		default:
			PPPOE_CNT_INC(DISC_LIMIT_SESSIONS);
			send_pads(pe, &t, 0, 0, PPPOE_TAG_AC_SYSTEM_ERROR, PADS_ERR_LIMIT);
			break;
		}
		return;
	}
	u->sid = s->sid;
	/* for display: a name longer than any we configure only when none is */
	n = RTE_MIN(t.service_len, (uint16_t)EGW_PPPOE_NAME_MAX);
	memcpy(s->service, t.service, n);
	s->service[n] = '\0';
	/* A PADS lost to a lack of mbufs is sent again when the client repeats
	 * its PADR: the session waits for it like one whose PADS the wire lost. */
	send_pads(pe, &t, s->sid, mp, 0, NULL);
	if (ppp_sess_start(s) != 0) {
		PPPOE_CNT_INC(DISC_PPP_START_FAIL);
		pppoe_sess_close(s, EGW_PPPOE_CAUSE_LCP_FAIL, true);
	}
}

static void
padt_input(const struct peer *pe, const uint8_t *dst, uint16_t sid, const uint8_t *tags,
	   uint16_t len)
{
	const struct pppoe_port *pt = &pppoe_g.ports[pe->port];
	struct pppoe_sess *s;
	struct pppoe_tags t;

	PPPOE_CNT_INC(PADT_RX);
	if (!rte_is_same_ether_addr((const struct rte_ether_addr *)dst, &pt->mac)) {
		PPPOE_CNT_INC(DISC_PADT_BAD_DST);
		return;
	}
	/* RFC 2516 5.5: no tags are required; a malformed one is counted, but
	 * the session of this peer ends all the same (it will not speak again) */
	(void)tags_ok(tags, len, &t);
	s = sid != 0 ? pppoe_sess_find(sid, pe->port, &pe->mac, pe->n_vlan, pe->vid) : NULL;
	if (s == NULL) {
		PPPOE_CNT_INC(DISC_PADT_UNKNOWN);
		return;
	}
	/* RFC 2516 5.5: no PPP traffic after a PADT, not even a Terminate */
	pppoe_sess_close(s, EGW_PPPOE_CAUSE_PADT, false);
}

static void
disc_frame(struct rte_mbuf *m)
{
	uint8_t nv = egw_eth_meta(m)->n_vlan;
	uint32_t l2 = RTE_ETHER_HDR_LEN + RTE_VLAN_HLEN * nv, flen = m->pkt_len;
	const uint8_t *f, *src;
	struct pppoe_hdr h;
	struct peer pe;
	uint16_t len, sid;

	pe.port = m->port;
	if (pe.port >= RTE_MAX_ETHPORTS || !pppoe_g.ports[pe.port].access) {
		PPPOE_CNT_INC(DISC_NOT_ACCESS);
		return;
	}
	if (flen > DISC_SCRATCH) {
		PPPOE_CNT_INC(DISC_TOO_LONG);
		return;
	}
	f = rte_pktmbuf_read(m, 0, flen, disc_scratch);
	if (f == NULL || nv > 2 || flen < l2 + PPPOE_HDR_LEN) {
		PPPOE_CNT_INC(DISC_SHORT);
		return;
	}
	memcpy(&h, f + l2, sizeof(h));
	if (h.ver_type != PPPOE_VER_TYPE) {
		PPPOE_CNT_INC(DISC_BAD_VER_TYPE);
		return;
	}
	/* only len bytes are ours: the rest is Ethernet padding */
	len = rte_be_to_cpu_16(h.len);
	if (len > flen - l2 - PPPOE_HDR_LEN) {
		PPPOE_CNT_INC(DISC_BAD_LENGTH);
		return;
	}
	src = f + RTE_ETHER_ADDR_LEN;
	if (!rte_is_valid_assigned_ether_addr((const struct rte_ether_addr *)src)) {
		PPPOE_CNT_INC(DISC_BAD_SRC);
		return;
	}
	memcpy(&pe.mac, src, RTE_ETHER_ADDR_LEN);
	pppoe_frame_tags(m, &pe.n_vlan, pe.tci, pe.tpid);
	pe.vid[0] = pe.tci[0] & RTE_VLAN_ID_MASK;
	pe.vid[1] = pe.tci[1] & RTE_VLAN_ID_MASK;
	sid = rte_be_to_cpu_16(h.sid);

	switch (h.code) {
	case PPPOE_CODE_PADI: padi_input(&pe, f, sid, f + l2 + PPPOE_HDR_LEN, len); break;
	case PPPOE_CODE_PADR: padr_input(&pe, f, sid, f + l2 + PPPOE_HDR_LEN, len); break;
	case PPPOE_CODE_PADT: padt_input(&pe, f, sid, f + l2 + PPPOE_HDR_LEN, len); break;
	case PPPOE_CODE_PADO:
	case PPPOE_CODE_PADS: PPPOE_CNT_INC(DISC_UNEXPECTED_CODE); break;
	default: PPPOE_CNT_INC(DISC_UNKNOWN_CODE); break;
	}
}

void
pppoe_disc_input(struct rte_mbuf *m)
{
	disc_frame(m);
	rte_pktmbuf_free(m);
}
