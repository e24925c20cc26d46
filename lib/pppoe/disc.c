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
 *  - a client whose PADS was lost sends the same PADR again: when the PADR
 *    matches one answered within PADR_RESEND_S seconds (same port, VLANs,
 *    MAC, cookie and Host-Uniq) and that session has received nothing yet,
 *    the same PADS is sent again instead of opening a second session.
 *
 * AC cookie: epoch byte || first 16 bytes of HMAC-SHA256(secret[epoch],
 * epoch || client MAC || port || number of tags || VLAN ids). The secret is
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
#include <rte_mbuf.h>

#include "pppoe_private.h"

#define COOKIE_ROTATE_S 60
#define COOKIE_KEY_LEN 32
#define COOKIE_MAC_LEN 16
#define COOKIE_LEN (1 + COOKIE_MAC_LEN)

/* 9216: the largest frame an access port takes (as in ctl.c) */
#define DISC_SCRATCH 9216
/* Most bytes of PPPoE header and tags in a reply: it must fit a client on a
 * standard 1500-byte link, whatever our port's MTU. */
#define REPLY_MAX RTE_ETHER_MTU

/* PADR retransmission: remembered PADS (see the top of the file) */
#define PADR_RESEND_S 30
#define PADR_CACHE 64
#define PADR_HU_MAX 64 /* longer Host-Uniq values are not remembered */

/* Error texts of refusing PADSs (RFC 2516 A: UTF-8, for people) */
#define PADS_ERR_SERVICE "service not offered"
#define PADS_ERR_LIMIT "session limit reached"
#define PADS_ERR_PER_MAC "too many sessions for this MAC"
#define PADS_ERR_MAX (sizeof(PADS_ERR_PER_MAC) - 1)

static struct {
	uint8_t key[2][COOKIE_KEY_LEN]; /* key[gen & 1] current, the other the previous */
	uint32_t gen;
	uint64_t last_tsc; /* last rotation */
	bool ready;
} ck;

struct padr_ent {
	uint64_t tsc; /* 0: free */
	uint16_t sid;
	uint16_t port;
	struct rte_ether_addr mac;
	uint8_t n_vlan;
	uint16_t vid[2];
	uint8_t cookie[COOKIE_LEN];
	uint16_t hu_len;
	uint8_t hu[PADR_HU_MAX];
};

static struct padr_ent padr_cache[PADR_CACHE];
static unsigned int padr_next;

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

static void
cookie_mac(const uint8_t key[COOKIE_KEY_LEN], uint8_t epoch, const struct peer *pe,
	   uint8_t out[COOKIE_MAC_LEN])
{
	uint8_t msg[1 + RTE_ETHER_ADDR_LEN + 2 + 1 + 4];
	uint8_t md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;

	msg[0] = epoch;
	memcpy(msg + 1, pe->mac.addr_bytes, RTE_ETHER_ADDR_LEN);
	put_be16(msg + 7, pe->port);
	msg[9] = pe->n_vlan;
	put_be16(msg + 10, pe->vid[0]);
	put_be16(msg + 12, pe->vid[1]);
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
	cookie_mac(ck.key[ck.gen & 1], out[0], pe, out + 1);
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
	cookie_mac(ck.key[gen & 1], c[0], pe, want);
	return CRYPTO_memcmp(want, c + 1, COOKIE_MAC_LEN) == 0;
}

int
pppoe_disc_init(void)
{
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
	memset(padr_cache, 0, sizeof(padr_cache));
	padr_next = 0;
	return 0;
}

void
pppoe_disc_fini(void)
{
	OPENSSL_cleanse(&ck, sizeof(ck));
	memset(padr_cache, 0, sizeof(padr_cache));
	padr_next = 0;
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
	return 1;
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

/* ---- PADR retransmissions ------------------------------------------------------ */

static bool
peer_is(const struct padr_ent *e, const struct peer *pe)
{
	return e->port == pe->port && rte_is_same_ether_addr(&e->mac, &pe->mac) &&
	       e->n_vlan == pe->n_vlan && e->vid[0] == pe->vid[0] && e->vid[1] == pe->vid[1];
}

/* The session a repeated PADR asks for again, or NULL. */
static struct pppoe_sess *
padr_repeat(const struct peer *pe, const struct pppoe_tags *t, uint64_t now)
{
	uint64_t window = rte_get_tsc_hz() * PADR_RESEND_S;
	unsigned int i;

	if (t->host_uniq_len > PADR_HU_MAX)
		return NULL;
	for (i = 0; i < PADR_CACHE; i++) {
		struct padr_ent *e = &padr_cache[i];
		struct pppoe_sess *s;

		if (e->tsc == 0 || now - e->tsc > window || !peer_is(e, pe) ||
		    memcmp(e->cookie, t->cookie, COOKIE_LEN) != 0 ||
		    e->hu_len != t->host_uniq_len ||
		    (e->hu_len != 0 && memcmp(e->hu, t->host_uniq, e->hu_len) != 0))
			continue;
		s = pppoe_sess_get(e->sid);
		/* still the session we opened, and the client has not spoken on it */
		if (s != NULL && s->state == EGW_PPPOE_S_NEGOTIATING && s->ctrl_rx == 0 &&
		    s->port == pe->port && rte_is_same_ether_addr(&s->mac, &pe->mac))
			return s;
		e->tsc = 0;
	}
	return NULL;
}

static void
padr_remember(const struct peer *pe, const struct pppoe_tags *t, uint16_t sid, uint64_t now)
{
	struct padr_ent *e;

	if (t->host_uniq_len > PADR_HU_MAX)
		return;
	e = &padr_cache[padr_next];
	padr_next = (padr_next + 1) % PADR_CACHE;
	e->tsc = now != 0 ? now : 1;
	e->sid = sid;
	e->port = pe->port;
	e->mac = pe->mac;
	e->n_vlan = pe->n_vlan;
	e->vid[0] = pe->vid[0];
	e->vid[1] = pe->vid[1];
	memcpy(e->cookie, t->cookie, COOKIE_LEN);
	e->hu_len = t->host_uniq_len;
	if (t->host_uniq_len != 0)
		memcpy(e->hu, t->host_uniq, t->host_uniq_len);
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
	send_pado(pe, &t);
}

static void
padr_input(const struct peer *pe, const uint8_t *dst, uint16_t sid, const uint8_t *tags,
	   uint16_t len)
{
	const struct pppoe_port *pt = &pppoe_g.ports[pe->port];
	uint64_t now = rte_rdtsc();
	enum pppoe_refuse why = PPPOE_REFUSE_NONE;
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
	s = padr_repeat(pe, &t, now);
	if (s != NULL) {
		PPPOE_CNT_INC(PADS_RESENT);
		send_pads(pe, &t, s->sid, s->max_payload, 0, NULL);
		return;
	}
	if (!service_served(&t)) {
		PPPOE_CNT_INC(DISC_PADR_SERVICE_UNKNOWN);
		send_pads(pe, &t, 0, 0, PPPOE_TAG_SERVICE_NAME_ERROR, PADS_ERR_SERVICE);
		return;
	}
	mp = max_payload_grant(&t, pe->port);
	s = pppoe_sess_create(pe->port, &pe->mac, pe->n_vlan, pe->tci, pe->tpid, mp, &why);
	if (s == NULL) {
		if (why == PPPOE_REFUSE_PER_MAC) {
			PPPOE_CNT_INC(DISC_LIMIT_PER_MAC);
			send_pads(pe, &t, 0, 0, PPPOE_TAG_AC_SYSTEM_ERROR, PADS_ERR_PER_MAC);
		} else {
			PPPOE_CNT_INC(DISC_LIMIT_SESSIONS);
			send_pads(pe, &t, 0, 0, PPPOE_TAG_AC_SYSTEM_ERROR, PADS_ERR_LIMIT);
		}
		return;
	}
	/* for display: a name longer than any we configure only when none is */
	n = RTE_MIN(t.service_len, (uint16_t)EGW_PPPOE_NAME_MAX);
	memcpy(s->service, t.service, n);
	s->service[n] = '\0';
	/* A PADS lost to a lack of mbufs is sent again when the client repeats
	 * its PADR: the session waits for it like one whose PADS the wire lost. */
	send_pads(pe, &t, s->sid, mp, 0, NULL);
	padr_remember(pe, &t, s->sid, now);
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
	if (!tags_ok(tags, len, &t))
		return;
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
