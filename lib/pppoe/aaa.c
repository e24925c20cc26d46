/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control path: the hooks of remote authentication and accounting (AAA).
 *
 * With an authentication order other than local, a PAP request or CHAP
 * response goes to the application's AAA hook (RADIUS) with a cookie, and
 * the answer comes back through egw_pppoe_auth_done(). The session does not
 * wait in a call: its timers run on (the authentication phase's deadline
 * ends a session whose answer never comes), and an answer whose cookie is
 * not the one the session waits for (closed, renegotiated, answered) is
 * dropped. The credentials are kept only while an answer is awaited, for
 * the local fallback, and wiped then.
 *
 * Accounting: the hook hears EGW_PPPOE_EV_UP when a session's first NCP is
 * bound and EGW_PPPOE_EV_DOWN when the session is freed after its grace
 * period, when no data-path thread can count for it any more, so the
 * counters read then are the final ones.
 */
#include <errno.h>
#include <string.h>

#include <openssl/crypto.h>

#include "ppp.h"

static struct {
	enum egw_pppoe_auth_order order;
	egw_pppoe_auth_fn auth;
	egw_pppoe_event_fn event;
	void *arg;
	uint64_t cookie;
} aaa;

int
egw_pppoe_set_auth_order(enum egw_pppoe_auth_order order)
{
	switch (order) {
	case EGW_PPPOE_AUTH_LOCAL:
	case EGW_PPPOE_AUTH_REMOTE:
	case EGW_PPPOE_AUTH_REMOTE_LOCAL: aaa.order = order; return 0;
	default: return -EINVAL;
	}
}

enum egw_pppoe_auth_order
egw_pppoe_get_auth_order(void)
{
	return aaa.order;
}

int
egw_pppoe_set_aaa(egw_pppoe_auth_fn auth, egw_pppoe_event_fn event, void *arg)
{
	aaa.auth = auth;
	aaa.event = event;
	aaa.arg = arg;
	return 0;
}

bool
pppoe_aaa_remote(void)
{
	return aaa.order != EGW_PPPOE_AUTH_LOCAL;
}

static void
cred_wipe(struct ppp_sess *ps)
{
	OPENSSL_cleanse(ps->aaa_cred, sizeof(ps->aaa_cred));
	ps->aaa_cred_len = 0;
}

int
ppp_aaa_start(struct ppp_sess *ps, uint8_t id, const uint8_t *name, uint8_t nl, const uint8_t *cred,
	      uint8_t cl)
{
	const struct pppoe_sess *s = ps->s;
	struct egw_pppoe_auth_req r;
	unsigned int i;
	int rc;

	if (aaa.auth == NULL) {
		/* no hook: nobody can answer; only the fallback may accept */
		if (aaa.order == EGW_PPPOE_AUTH_REMOTE_LOCAL) {
			PPPOE_CNT_INC(AUTH_REMOTE_FALLBACK);
			return 0;
		}
		PPPOE_CNT_INC(AUTH_REMOTE_REJECT);
		return -1;
	}
	if (nl == 0 || nl > EGW_PPPOE_NAME_MAX || cl > sizeof(ps->aaa_cred))
		return -1;
	memcpy(ps->aaa_user, name, nl);
	ps->aaa_user[nl] = '\0';
	/* a NUL in the name would let two names look alike */
	if (strlen(ps->aaa_user) != nl)
		return -1;
	memset(&r, 0, sizeof(r));
	r.sid = s->sid;
	r.cookie = ++aaa.cookie;
	r.method = ps->auth;
	r.user = ps->aaa_user;
	r.user_len = nl;
	if (ps->auth == EGW_PPPOE_AUTH_PAP) {
		r.password = cred;
		r.password_len = cl;
	} else {
		r.chap_id = id;
		r.chap_challenge = ps->chap_chal;
		r.chap_response = cred;
	}
	r.port = s->port;
	r.mac = s->mac;
	r.n_vlan = s->n_vlan;
	for (i = 0; i < s->n_vlan && i < 2; i++)
		r.vlan[i] = s->tci[i] & RTE_VLAN_ID_MASK;
	r.service = s->service;
	ps->aaa_seen = true;
	rc = aaa.auth(&r, aaa.arg);
	if (rc == 0) {
		PPPOE_CNT_INC(AUTH_REMOTE);
		ps->aaa_cookie = r.cookie;
		ps->aaa_id = id;
		memcpy(ps->aaa_cred, cred, cl);
		ps->aaa_cred_len = cl;
		return 1;
	}
	if ((rc == -ENOENT || rc == -EHOSTUNREACH) && aaa.order == EGW_PPPOE_AUTH_REMOTE_LOCAL) {
		PPPOE_CNT_INC(AUTH_REMOTE_FALLBACK);
		return 0;
	}
	PPPOE_CNT_INC(AUTH_REMOTE_REJECT);
	return -1;
}

/* Apply what the authorisation grants; false if it cannot be. */
static bool
authz_apply(struct ppp_sess *ps, const struct egw_pppoe_authz *z)
{
	if (z == NULL)
		return true;
	/* fail closed: a filter the server names must exist here */
	if (z->filter_set != NULL && z->filter_set[0] != '\0') {
		if (!egw_pppoe_filter_set_exists(z->filter_set)) {
			PPPOE_CNT_INC(AUTH_REMOTE_BAD_FILTER);
			PPPOE_LOG(NOTICE,
				  "session %u: the authorisation names filter set '%s', which does "
				  "not exist: login refused",
				  ps->s->sid, z->filter_set);
			return false;
		}
		snprintf(ps->filter_set, sizeof(ps->filter_set), "%s", z->filter_set);
	}
	if (z->pool != NULL && z->pool[0] != '\0') {
		if (strlen(z->pool) >= sizeof(ps->pool) || !pppoe_pool4_named_exists(z->pool))
			return false;
		/* kept across LCP renegotiation, as the address it gives */
		if (ps->addr == 0)
			strcpy(ps->pool, z->pool);
	}
	if (z->ip4 != 0) {
		uint32_t a = rte_be_to_cpu_32(z->ip4);

		if ((a >> 24) == 0 || (a >> 24) == 127 || (a >> 28) >= 14)
			return false;
		ps->user_addr = z->ip4;
		ps->pool[0] = '\0';
	}
	if (z->has_ip6_prefix && !ps->has_prefix) {
		memcpy(ps->prefix, z->ip6_prefix, sizeof(ps->prefix));
		ps->has_prefix = true;
		ps->prefix_fixed = true;
	}
	ps->dns[0] = z->dns[0];
	ps->dns[1] = z->dns[1];
	memcpy(ps->dns6, z->dns6, sizeof(ps->dns6));
	if (z->mtu >= PPP_MRU_MIN)
		pppoe_sess_set_mru(ps->s, RTE_MIN(ppp_peer_mru(ps), z->mtu));
	return true;
}

int
egw_pppoe_auth_done(uint16_t sid, uint64_t cookie, enum egw_pppoe_auth_result res,
		    const struct egw_pppoe_authz *z)
{
	struct pppoe_sess *s = pppoe_sess_get(sid);
	struct ppp_sess *ps = s != NULL ? s->ppp : NULL;
	const char *msg = z != NULL ? z->message : NULL;

	if (ps == NULL || ps->stopped || cookie == 0 || ps->aaa_cookie != cookie ||
	    ps->phase != PPP_PHASE_AUTH) {
		PPPOE_CNT_INC(AUTH_REMOTE_LATE);
		return -ESTALE;
	}
	ps->aaa_cookie = 0;
	switch (res) {
	case EGW_PPPOE_AUTH_ACCEPT:
		if (!authz_apply(ps, z)) {
			PPPOE_CNT_INC(AUTH_REMOTE_BAD_AUTHZ);
			ppp_auth_remote_result(ps, false, NULL);
			break;
		}
		PPPOE_CNT_INC(AUTH_REMOTE_OK);
		ppp_auth_remote_result(ps, true, msg);
		break;
	case EGW_PPPOE_AUTH_NO_SERVER:
		PPPOE_CNT_INC(AUTH_REMOTE_NO_SERVER);
		if (aaa.order == EGW_PPPOE_AUTH_REMOTE_LOCAL) {
			PPPOE_CNT_INC(AUTH_REMOTE_FALLBACK);
			ppp_auth_local_fallback(ps);
		} else {
			ppp_auth_remote_result(ps, false, NULL);
		}
		break;
	case EGW_PPPOE_AUTH_REJECT:
	default:
		PPPOE_CNT_INC(AUTH_REMOTE_REJECT);
		ppp_auth_remote_result(ps, false, msg);
		break;
	}
	cred_wipe(ps);
	return 0;
}

void
ppp_aaa_bound(struct ppp_sess *ps)
{
	if (ps->aaa_up || aaa.event == NULL)
		return;
	ps->aaa_up = true;
	ps->aaa_seen = true;
	aaa.event(EGW_PPPOE_EV_UP, ps->s->sid, aaa.arg);
}

void
ppp_aaa_closing(struct ppp_sess *ps)
{
	if (ps->aaa_up && aaa.event != NULL)
		aaa.event(EGW_PPPOE_EV_CLOSING, ps->s->sid, aaa.arg);
}

void
ppp_sess_closing(struct pppoe_sess *s)
{
	if (s->ppp != NULL)
		ppp_aaa_closing(s->ppp);
}

void
ppp_aaa_free(struct ppp_sess *ps)
{
	cred_wipe(ps);
	ps->aaa_cookie = 0;
	if (ps->aaa_seen && aaa.event != NULL)
		aaa.event(EGW_PPPOE_EV_DOWN, ps->s->sid, aaa.arg);
	ps->aaa_seen = false;
}

struct get_one {
	uint16_t sid;
	bool found;
	struct egw_pppoe_session_info *info;
};

static int
get_one_cb(const struct egw_pppoe_session_info *s, void *arg)
{
	struct get_one *g = arg;

	if (s->sid == g->sid) {
		*g->info = *s;
		g->found = true;
	}
	return 1; /* the first session at or after sid is the only one looked at */
}

int
egw_pppoe_session_get(uint16_t sid, struct egw_pppoe_session_info *info,
		      enum egw_pppoe_cause *cause)
{
	struct pppoe_sess *s = pppoe_sess_get(sid);
	struct get_one g = {.sid = sid, .info = info};

	if (s == NULL)
		return -ENOENT;
	egw_pppoe_session_walk_from(sid, get_one_cb, &g);
	if (!g.found)
		return -ENOENT;
	if (cause != NULL)
		*cause = s->cause;
	return 0;
}

int
egw_pppoe_session_terminate(uint16_t sid, enum egw_pppoe_cause cause)
{
	struct pppoe_sess *s = pppoe_sess_get(sid);

	if ((unsigned int)cause >= EGW_PPPOE_CAUSE_MAX || cause == EGW_PPPOE_CAUSE_NONE)
		return -EINVAL;
	if (s == NULL)
		return -ENOENT;
	if (s->state != EGW_PPPOE_S_CLOSING)
		ppp_sess_terminate(s, cause);
	return 0;
}
