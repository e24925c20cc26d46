/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Pass and active filters (pppd's pass-filter / active-filter) and the idle
 * timeout, as policy of bound sessions.
 *
 * A filter is compiled by filter.c. There is a default pass and active
 * filter, and each may be set per user (up to POLICY_USERS users). A session
 * gets its user's filter, or the default, when it binds: the pointers in its
 * fast-path slot (fp->pass, fp->active) are written before its state is
 * published, and replaced with release stores when a filter changes while
 * it is bound. The data path loads them with acquire, only while
 * pppoe_dp.filters is non-zero, and runs the pass filter on every IP frame
 * of the session in both directions (decapsulated upstream, before
 * encapsulation downstream); a frame it does not match is dropped as
 * pppoe_filtered. A replaced filter is freed after an RCU grace period
 * (rte_rcu_qsbr_synchronize), so no frame is judged by a freed or half
 * installed program: each frame runs the old program or the new one.
 *
 * Idle timeout: with pppoe idle-timeout set, each data-path context notes
 * when a session last passed a frame matching its active filter (every
 * frame when there is none); once a second the control path closes bound
 * sessions idle for longer (cause idle_timeout).
 */
#include <errno.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_rcu_qsbr.h>

#include "pppoe_filter.h"
#include "pppoe_private.h"

#define POLICY_USERS 64
#define IDLE_MAX_S 604800 /* a week */

struct policy_ent {
	char user[EGW_PPPOE_NAME_MAX + 1]; /* "" : the default */
	struct pppoe_filter *f[EGW_PPPOE_FILTER_MAX];
};

static struct {
	struct policy_ent def;
	struct policy_ent users[POLICY_USERS];
	unsigned int idle_s;
	uint64_t last_idle_check;
} pol;

static struct policy_ent *
user_ent(const char *user, bool create)
{
	struct policy_ent *free_ent = NULL;
	unsigned int i;

	if (user == NULL || user[0] == '\0')
		return &pol.def;
	for (i = 0; i < POLICY_USERS; i++) {
		if (strcmp(pol.users[i].user, user) == 0)
			return &pol.users[i];
		if (free_ent == NULL && pol.users[i].user[0] == '\0')
			free_ent = &pol.users[i];
	}
	if (!create || free_ent == NULL)
		return NULL;
	snprintf(free_ent->user, sizeof(free_ent->user), "%s", user);
	return free_ent;
}

/* The filter of kind k a session of this user runs. */
static struct pppoe_filter *
effective(const char *user, unsigned int k)
{
	struct policy_ent *e = user_ent(user, false);

	return e != NULL && e != &pol.def && e->f[k] != NULL ? e->f[k] : pol.def.f[k];
}

static void
dp_filters_update(void)
{
	unsigned int i, k, any = 0;

	for (k = 0; k < EGW_PPPOE_FILTER_MAX; k++) {
		any |= pol.def.f[k] != NULL;
		for (i = 0; i < POLICY_USERS; i++)
			any |= pol.users[i].f[k] != NULL;
	}
	__atomic_store_n(&pppoe_dp.filters, any | (pol.idle_s != 0 ? 2u : 0u), __ATOMIC_RELEASE);
}

void
pppoe_policy_attach(struct pppoe_sess *s)
{
	const char *user = ppp_sess_user(s);
	unsigned int k;

	for (k = 0; k < EGW_PPPOE_FILTER_MAX; k++)
		__atomic_store_n(&s->fp->filt[k], effective(user, k), __ATOMIC_RELEASE);
}

int
egw_pppoe_set_filter(enum egw_pppoe_filter_kind kind, const char *user, const char *expr, char *err,
		     size_t errlen)
{
	struct pppoe_filter *nf = NULL, *old;
	struct policy_ent *e;
	unsigned int sid;

	if ((unsigned int)kind >= EGW_PPPOE_FILTER_MAX || !pppoe_g.init ||
	    (user != NULL && strlen(user) > EGW_PPPOE_NAME_MAX)) {
		snprintf(err, errlen, "bad arguments");
		return -EINVAL;
	}
	if (expr != NULL) {
		nf = pppoe_filter_compile(expr, pppoe_g.socket, err, errlen);
		if (nf == NULL)
			return -rte_errno;
	}
	e = user_ent(user, expr != NULL);
	if (e == NULL) {
		pppoe_filter_free(nf);
		if (expr == NULL)
			return 0; /* nothing to remove */
		snprintf(err, errlen, "filters for at most %u users", POLICY_USERS);
		return -ENOSPC;
	}
	old = e->f[kind];
	e->f[kind] = nf;
	if (nf != NULL)
		__atomic_store_n(&pppoe_dp.filters, pppoe_dp.filters | 1u, __ATOMIC_RELEASE);
	/* every bound session whose effective filter this is gets the new one */
	for (sid = 1; sid <= pppoe_g.table_size; sid++) {
		struct pppoe_sess *s = pppoe_sess_get((uint16_t)sid);

		if (s != NULL && s->state == EGW_PPPOE_S_BOUND)
			__atomic_store_n(&s->fp->filt[kind], effective(ppp_sess_user(s), kind),
					 __ATOMIC_RELEASE);
	}
	if (e != &pol.def && e->f[0] == NULL && e->f[1] == NULL)
		e->user[0] = '\0';
	dp_filters_update();
	if (old != NULL) {
		/* no data-path thread runs the old program after this */
		rte_rcu_qsbr_synchronize(pppoe_g.qsbr, RTE_QSBR_THRID_INVALID);
		pppoe_filter_free(old);
	}
	return 0;
}

void
egw_pppoe_filters_walk(void (*fn)(const char *user, enum egw_pppoe_filter_kind kind,
				  const char *expr, bool jit, void *arg),
		       void *arg)
{
	unsigned int i, k;

	for (k = 0; k < EGW_PPPOE_FILTER_MAX; k++)
		if (pol.def.f[k] != NULL)
			fn(NULL, k, pol.def.f[k]->expr, pppoe_filter_jit(pol.def.f[k]), arg);
	for (i = 0; i < POLICY_USERS; i++)
		for (k = 0; k < EGW_PPPOE_FILTER_MAX; k++)
			if (pol.users[i].user[0] != '\0' && pol.users[i].f[k] != NULL)
				fn(pol.users[i].user, k, pol.users[i].f[k]->expr,
				   pppoe_filter_jit(pol.users[i].f[k]), arg);
}

int
egw_pppoe_set_idle_timeout(unsigned int s)
{
	if (s > IDLE_MAX_S)
		return -EINVAL;
	pol.idle_s = s;
	if (pppoe_g.init)
		dp_filters_update();
	return 0;
}

unsigned int
pppoe_policy_idle_s(void)
{
	return pol.idle_s;
}

unsigned int
pppoe_policy_service(uint64_t now)
{
	uint64_t hz = rte_get_tsc_hz(), limit;
	unsigned int sid, n = 0;

	if (pol.idle_s == 0 || now - pol.last_idle_check < hz)
		return 0;
	pol.last_idle_check = now;
	limit = (uint64_t)pol.idle_s * hz;
	for (sid = 1; sid <= pppoe_g.table_size; sid++) {
		struct pppoe_sess *s = pppoe_sess_get((uint16_t)sid);
		uint64_t last;

		if (s == NULL || s->state != EGW_PPPOE_S_BOUND)
			continue;
		last = RTE_MAX(pppoe_fast_sess_active((uint16_t)sid), s->bound_tsc);
		if (now - last > limit) {
			ppp_sess_terminate(s, EGW_PPPOE_CAUSE_IDLE);
			n++;
		}
	}
	return n;
}

void
pppoe_policy_fini(void)
{
	unsigned int i, k;

	for (k = 0; k < EGW_PPPOE_FILTER_MAX; k++) {
		pppoe_filter_free(pol.def.f[k]);
		for (i = 0; i < POLICY_USERS; i++)
			pppoe_filter_free(pol.users[i].f[k]);
	}
	memset(&pol, 0, sizeof(pol));
}
