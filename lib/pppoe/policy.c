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
 * Named filter sets: a set is a name with a pass and/or an active filter
 * (up to POLICY_SETS sets). A session names one (a local user's `filter
 * <set>`, RADIUS Filter-Id, changed by CoA: ppp_sess_filter_set()); for
 * each kind the set defines it runs the set's filter instead of its user's
 * or the default. The fast path is the same: the set's programs are put in
 * the same slot pointers. A set that a session or a local user names cannot
 * be emptied (EBUSY): a session never refers to a set that is gone, and a
 * login whose authorisation names no set is refused (aaa.c): fail closed.
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
#define POLICY_SETS 64
#define IDLE_MAX_S 604800 /* a week */

struct policy_ent {
	char user[EGW_PPPOE_NAME_MAX + 1]; /* "" : the default */
	struct pppoe_filter *f[EGW_PPPOE_FILTER_MAX];
};

static struct {
	struct policy_ent def;
	struct policy_ent users[POLICY_USERS];
	struct policy_ent sets[POLICY_SETS]; /* user[]: the set's name */
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

static struct policy_ent *
set_ent(const char *name, bool create)
{
	struct policy_ent *free_ent = NULL;
	unsigned int i;

	if (name == NULL || name[0] == '\0')
		return NULL;
	for (i = 0; i < POLICY_SETS; i++) {
		if (strcmp(pol.sets[i].user, name) == 0)
			return &pol.sets[i];
		if (free_ent == NULL && pol.sets[i].user[0] == '\0')
			free_ent = &pol.sets[i];
	}
	if (!create || free_ent == NULL)
		return NULL;
	snprintf(free_ent->user, sizeof(free_ent->user), "%s", name);
	return free_ent;
}

bool
egw_pppoe_filter_set_exists(const char *name)
{
	return name != NULL && strlen(name) <= EGW_PPPOE_NAME_MAX && set_ent(name, false) != NULL;
}

/* The filter of kind k a session of this user runs, with the named set
 * (NULL or "": none) first. */
static struct pppoe_filter *
effective(const char *user, const char *set, unsigned int k)
{
	struct policy_ent *e = set_ent(set, false);

	if (e != NULL && e->f[k] != NULL)
		return e->f[k];
	e = user_ent(user, false);
	return e != NULL && e != &pol.def && e->f[k] != NULL ? e->f[k] : pol.def.f[k];
}

static struct pppoe_filter *
sess_effective(const struct pppoe_sess *s, unsigned int k)
{
	return effective(ppp_sess_user(s), ppp_sess_filter_set(s), k);
}

static void
dp_filters_update(void)
{
	unsigned int i, k, any = 0;

	for (k = 0; k < EGW_PPPOE_FILTER_MAX; k++) {
		any |= pol.def.f[k] != NULL;
		for (i = 0; i < POLICY_USERS; i++)
			any |= pol.users[i].f[k] != NULL;
		for (i = 0; i < POLICY_SETS; i++)
			any |= pol.sets[i].f[k] != NULL;
	}
	__atomic_store_n(&pppoe_dp.filters, any | (pol.idle_s != 0 ? 2u : 0u), __ATOMIC_RELEASE);
}

void
pppoe_policy_attach(struct pppoe_sess *s)
{
	unsigned int k;

	/* pairs with the acquire loads of fp->filt in fast.c */
	for (k = 0; k < EGW_PPPOE_FILTER_MAX; k++)
		__atomic_store_n(&s->fp->filt[k], sess_effective(s, k), __ATOMIC_RELEASE);
}

/* Sessions (in any state) naming set name. */
static unsigned int
set_sessions(const char *name)
{
	unsigned int sid, n = 0;

	for (sid = 1; sid <= pppoe_g.table_size; sid++) {
		struct pppoe_sess *s = pppoe_sess_get((uint16_t)sid);

		if (s != NULL && s->state != EGW_PPPOE_S_FREE &&
		    strcmp(ppp_sess_filter_set(s), name) == 0)
			n++;
	}
	return n;
}

static int
filter_set_common(enum egw_pppoe_filter_kind kind, const char *user, const char *set,
		  const char *expr, char *err, size_t errlen)
{
	struct pppoe_filter *nf = NULL, *old;
	struct policy_ent *e;
	unsigned int sid, n;
	const char *name = set != NULL ? set : user;

	if ((unsigned int)kind >= EGW_PPPOE_FILTER_MAX || !pppoe_g.init ||
	    (name != NULL && strlen(name) > EGW_PPPOE_NAME_MAX) ||
	    (set != NULL && set[0] == '\0')) {
		snprintf(err, errlen, "bad arguments");
		return -EINVAL;
	}
	if (set != NULL && expr == NULL) {
		e = set_ent(set, false);
		if (e == NULL)
			return 0; /* nothing to remove */
		/* the set's last filter goes: the set with it, unless named */
		if (e->f[kind] != NULL &&
		    e->f[kind == EGW_PPPOE_FILTER_PASS ? EGW_PPPOE_FILTER_ACTIVE
						       : EGW_PPPOE_FILTER_PASS] == NULL) {
			n = set_sessions(set);
			if (n != 0 || ppp_users_name_set(set)) {
				snprintf(err, errlen,
					 "filter set %s is named by %u sessions%s: it cannot "
					 "be emptied",
					 set, n, ppp_users_name_set(set) ? " and local users" : "");
				return -EBUSY;
			}
		}
	}
	if (expr != NULL) {
		nf = pppoe_filter_compile(expr, pppoe_g.socket, err, errlen);
		if (nf == NULL)
			return -rte_errno;
	}
	e = set != NULL ? set_ent(set, expr != NULL) : user_ent(user, expr != NULL);
	if (e == NULL) {
		pppoe_filter_free(nf);
		if (expr == NULL)
			return 0; /* nothing to remove */
		if (set != NULL)
			snprintf(err, errlen, "at most %u filter sets", POLICY_SETS);
		else
			snprintf(err, errlen, "filters for at most %u users", POLICY_USERS);
		return -ENOSPC;
	}
	old = e->f[kind];
	e->f[kind] = nf;
	if (nf != NULL)
		__atomic_store_n(&pppoe_dp.filters, pppoe_dp.filters | 1u, __ATOMIC_RELEASE);
	/* every bound session whose effective filter this is gets the new one;
	 * pairs with the acquire loads of fp->filt in fast.c */
	for (sid = 1; sid <= pppoe_g.table_size; sid++) {
		struct pppoe_sess *s = pppoe_sess_get((uint16_t)sid);

		if (s != NULL && s->state == EGW_PPPOE_S_BOUND)
			__atomic_store_n(&s->fp->filt[kind], sess_effective(s, kind),
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

int
egw_pppoe_set_filter(enum egw_pppoe_filter_kind kind, const char *user, const char *expr, char *err,
		     size_t errlen)
{
	return filter_set_common(kind, user, NULL, expr, err, errlen);
}

int
egw_pppoe_set_filter_set(enum egw_pppoe_filter_kind kind, const char *set, const char *expr,
			 char *err, size_t errlen)
{
	if (set == NULL) {
		snprintf(err, errlen, "bad arguments");
		return -EINVAL;
	}
	return filter_set_common(kind, NULL, set, expr, err, errlen);
}

int
egw_pppoe_session_set_filter_set(uint16_t sid, const char *set)
{
	struct pppoe_sess *s = pppoe_sess_get(sid);
	unsigned int k;
	int rc;

	if (s == NULL || s->state == EGW_PPPOE_S_FREE || s->state == EGW_PPPOE_S_CLOSING)
		return -ENOENT;
	if (set != NULL && set[0] != '\0' && !egw_pppoe_filter_set_exists(set))
		return -ESRCH;
	rc = ppp_sess_set_filter_set(s, set);
	if (rc < 0)
		return rc;
	/* the set's programs stay allocated while it exists: a frame judged by
	 * the old pointer runs a live program; pairs with the acquire loads of
	 * fp->filt in fast.c */
	if (s->state == EGW_PPPOE_S_BOUND)
		for (k = 0; k < EGW_PPPOE_FILTER_MAX; k++)
			__atomic_store_n(&s->fp->filt[k], sess_effective(s, k), __ATOMIC_RELEASE);
	return 0;
}

void
egw_pppoe_filter_sets_walk(void (*fn)(const char *set, enum egw_pppoe_filter_kind kind,
				      const char *expr, bool jit, unsigned int sessions, void *arg),
			   void *arg)
{
	unsigned int i, k, n;

	for (i = 0; i < POLICY_SETS; i++) {
		if (pol.sets[i].user[0] == '\0')
			continue;
		n = set_sessions(pol.sets[i].user);
		for (k = 0; k < EGW_PPPOE_FILTER_MAX; k++)
			if (pol.sets[i].f[k] != NULL)
				fn(pol.sets[i].user, k, pol.sets[i].f[k]->expr,
				   pppoe_filter_jit(pol.sets[i].f[k]), n, arg);
	}
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
		for (i = 0; i < POLICY_SETS; i++)
			pppoe_filter_free(pol.sets[i].f[k]);
	}
	memset(&pol, 0, sizeof(pol));
}
