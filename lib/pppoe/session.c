/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Session table: slots indexed by session id, id allocation, publication to
 * the data path, downstream routes, grace periods.
 *
 * Two arrays of size + 1 entries (index = session id, 0 never used): the
 * compact struct pppoe_sess_fp the data path reads, on the table's socket,
 * and the control path's struct pppoe_sess. Only the control path writes
 * either. A slot's fast-path fields are all written while its state is FREE
 * (no reader uses them then), and the state is published last with a release
 * store; the data path loads the state with acquire (fast.c) before it reads
 * anything else of the slot.
 *
 * A closed session stays in the table as CLOSING until an rte_rcu_qsbr grace
 * period has passed (every data-path thread has reported quiescent since the
 * close), so no thread still holds the slot when it is freed and its id goes
 * back to the free list. Ids are handed out in FIFO order, so a freed id is
 * the last one to be reused.
 *
 * Downstream routes (IPv4 address, IPv6 /64 -> session) are lock-free
 * rte_hash tables (RTE_HASH_EXTRA_FLAGS_RW_CONCURRENCY_LF) attached to the
 * same QSBR variable in defer-queue mode: a deleted key slot is reused only
 * after a grace period, so a reader never compares against a reused slot.
 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_malloc.h>
#include <rte_rcu_qsbr.h>

#include "pppoe_private.h"

/*
 * The decap path reads only the first cache line of a slot (state, key, ncp,
 * mss, addresses); encap also reads the header template in the second.
 */
static_assert(sizeof(struct pppoe_sess_fp) <= 2 * RTE_CACHE_LINE_SIZE,
	      "struct pppoe_sess_fp must fit in two cache lines");
static_assert(offsetof(struct pppoe_sess_fp, ip6_prefix) + 8 <= RTE_CACHE_LINE_SIZE,
	      "the fields decap reads must be in the first cache line");

struct pppoe_dp pppoe_dp;

/* Free list link value meaning "none" (ids are 1..65534). */
#define SID_NONE 0

/* Route tables hold twice the table size: deleted key slots wait in the
 * RCU defer queue for a grace period before they can be reused. */
#define ROUTE_ENTRIES(size) (2 * (size) + 8)

static struct {
	unsigned int size;
	struct pppoe_sess *sess; /* control array, size + 1 */
	/* data-path counters of a slot when its session was created: what a
	 * session shows is the sum over the contexts minus this */
	uint64_t (*base)[4];
	uint32_t free_head, free_tail;       /* FIFO of free ids through next_free */
	uint32_t closing_head, closing_tail; /* closing sessions, in close order */
	unsigned int nb_used;                /* not free */
	unsigned int nb_state[4];
	struct rte_hash *per_mac; /* control only: MAC -> sessions not free */
} tab;

static const char *const cause_names[] = {
#define EGW_PPPOE_CAUSE(e, n, d) n,
#include "egw_pppoe_cause.def"
#undef EGW_PPPOE_CAUSE
};

const char *
egw_pppoe_cause_name(unsigned int cause)
{
	return cause < RTE_DIM(cause_names) ? cause_names[cause] : "unknown";
}

static void
cnt_inc(enum pppoe_cnt k)
{
	/* pppoe_cnt is written by the control path only; readers load relaxed */
	__atomic_store_n(&pppoe_cnt[k], pppoe_cnt[k] + 1, __ATOMIC_RELAXED);
}

static uint32_t
route4_hash(const void *key, uint32_t len, uint32_t init)
{
	uint32_t k;

	RTE_SET_USED(len);
	memcpy(&k, key, sizeof(k));
	return rte_hash_crc_4byte(k, init);
}

static uint32_t
route6_hash(const void *key, uint32_t len, uint32_t init)
{
	uint64_t k;

	RTE_SET_USED(len);
	memcpy(&k, key, sizeof(k));
	return rte_hash_crc_8byte(k, init);
}

static uint32_t
mac_hash(const void *key, uint32_t len, uint32_t init)
{
	uint64_t v = 0;

	/* MAC keys are only 2-byte aligned: rte_hash_crc() loads 4-byte words */
	RTE_SET_USED(len);
	memcpy(&v, key, RTE_ETHER_ADDR_LEN);
	return rte_hash_crc_8byte(v, init);
}

static struct rte_hash *
route_create(const char *name, uint32_t key_len, rte_hash_function fn, unsigned int size,
	     int socket)
{
	struct rte_hash_parameters hp = {
		.name = name,
		.entries = ROUTE_ENTRIES(size),
		.key_len = key_len,
		.hash_func = fn,
		.socket_id = socket,
		/* one writer (the control path), lock-free readers */
		.extra_flag = RTE_HASH_EXTRA_FLAGS_RW_CONCURRENCY_LF,
	};
	struct rte_hash_rcu_config rc = {
		.v = pppoe_g.qsbr,
		.mode = RTE_HASH_QSBR_MODE_DQ,
	};
	struct rte_hash *h = rte_hash_create(&hp);

	if (h == NULL)
		return NULL;
	if (pppoe_g.qsbr != NULL && rte_hash_rcu_qsbr_add(h, &rc) != 0) {
		PPPOE_LOG(ERR, "%s: cannot attach the RCU variable: %s", name,
			  rte_strerror(rte_errno));
		rte_hash_free(h);
		return NULL;
	}
	return h;
}

int
pppoe_sess_table_init(unsigned int size, int socket, bool own_routes)
{
	struct rte_hash_parameters mp = {
		.name = "egw_pppoe_per_mac",
		/* a cuckoo table refuses inserts near full: twice the keys it
		 * may hold, and extendable buckets, so that a MAC is never
		 * refused while ids are free */
		.entries = 2 * size + 8,
		.extra_flag = RTE_HASH_EXTRA_FLAGS_EXT_TABLE,
		.key_len = RTE_ETHER_ADDR_LEN,
		.hash_func = mac_hash,
		.socket_id = socket,
	};
	unsigned int i;

	if (size == 0 || size > EGW_PPPOE_MAX_SESSIONS)
		return -EINVAL;
	if (pppoe_dp.fp_tab != NULL)
		return -EEXIST;
	memset(&tab, 0, sizeof(tab));
	tab.size = size;
	pppoe_dp.fp_tab =
		rte_zmalloc_socket("egw_pppoe_sess_fp", (size + 1) * sizeof(struct pppoe_sess_fp),
				   RTE_CACHE_LINE_SIZE, socket);
	tab.sess = calloc(size + 1, sizeof(*tab.sess));
	tab.base = calloc(size + 1, sizeof(*tab.base));
	if (pppoe_dp.fp_tab == NULL || tab.sess == NULL || tab.base == NULL)
		goto nomem;
	if (own_routes) {
		pppoe_dp.route4 = route_create("egw_pppoe_route4", 4, route4_hash, size, socket);
		pppoe_dp.route6 = route_create("egw_pppoe_route6", 8, route6_hash, size, socket);
		if (pppoe_dp.route4 == NULL || pppoe_dp.route6 == NULL)
			goto nomem;
	}
	tab.per_mac = rte_hash_create(&mp);
	if (tab.per_mac == NULL)
		goto nomem;
	for (i = 1; i <= size; i++) {
		tab.sess[i].fp = &pppoe_dp.fp_tab[i];
		tab.sess[i].sid = (uint16_t)i;
		tab.sess[i].next_free = i < size ? i + 1 : SID_NONE;
	}
	tab.free_head = 1;
	tab.free_tail = size;
	__atomic_store_n(&pppoe_dp.bound, 0, __ATOMIC_RELAXED);
	return 0;
nomem:
	pppoe_sess_table_fini();
	return -ENOMEM;
}

void
pppoe_sess_table_fini(void)
{
	unsigned int i;

	if (tab.sess != NULL)
		for (i = 1; i <= tab.size; i++)
			if (tab.sess[i].state != EGW_PPPOE_S_FREE && tab.sess[i].ppp != NULL)
				ppp_sess_free(&tab.sess[i]);
	rte_hash_free(pppoe_dp.route4);
	rte_hash_free(pppoe_dp.route6);
	pppoe_dp.route4 = pppoe_dp.route6 = NULL;
	rte_hash_free(tab.per_mac);
	rte_free(pppoe_dp.fp_tab);
	pppoe_dp.fp_tab = NULL;
	free(tab.sess);
	free(tab.base);
	memset(&tab, 0, sizeof(tab));
	__atomic_store_n(&pppoe_dp.bound, 0, __ATOMIC_RELAXED);
}

/* ---- per-MAC counts (control path only) ---- */

static unsigned int
mac_count(const struct rte_ether_addr *mac)
{
	void *data;

	if (rte_hash_lookup_data(tab.per_mac, mac, &data) < 0)
		return 0;
	return (unsigned int)(uintptr_t)data;
}

static int
mac_count_add(const struct rte_ether_addr *mac, int delta)
{
	unsigned int n = mac_count(mac);

	if (delta < 0 && n <= (unsigned int)-delta) {
		rte_hash_del_key(tab.per_mac, mac);
		return 0;
	}
	n += (unsigned int)delta;
	return rte_hash_add_key_data(tab.per_mac, mac, (void *)(uintptr_t)n);
}

/* ---- states ---- */

static void
state_set(struct pppoe_sess *s, enum egw_pppoe_sess_state st)
{
	enum egw_pppoe_sess_state old = s->state;

	if (old == EGW_PPPOE_S_BOUND)
		__atomic_fetch_sub(&pppoe_dp.bound, 1, __ATOMIC_RELAXED);
	if (st == EGW_PPPOE_S_BOUND)
		__atomic_fetch_add(&pppoe_dp.bound, 1, __ATOMIC_RELAXED);
	tab.nb_state[old]--;
	tab.nb_state[st]++;
	s->state = st;
	/* Publishes every fast-path field written before: pairs with the
	 * acquire load of fp->state in fast.c (decap_frame, encap_frame). */
	__atomic_store_n(&s->fp->state, (uint32_t)st, __ATOMIC_RELEASE);
}

static void
mss_compute(uint16_t mru, uint16_t *mss4, uint16_t *mss6)
{
	const struct pppoe_conf *c = &pppoe_g.conf;

	switch (c->mss_mode) {
	case EGW_PPPOE_MSS_OFF:
		*mss4 = 0;
		*mss6 = 0;
		break;
	case EGW_PPPOE_MSS_FIXED:
		*mss4 = c->mss_value;
		*mss6 = c->mss_value > 20 ? (uint16_t)(c->mss_value - 20) : 0;
		break;
	case EGW_PPPOE_MSS_AUTO:
	default:
		/* the largest segment an IPv4/IPv6 + TCP header leaves room for */
		*mss4 = mru > 40 ? (uint16_t)(mru - 40) : 0;
		*mss6 = mru > 60 ? (uint16_t)(mru - 60) : 0;
		break;
	}
}

/* Header template: Ethernet to the client from the port, its tags as
 * received (TPIDs and full TCIs, outer first), PPPoE session header with
 * length 0 (encap fills it in). Returns its length. */
static uint8_t
hdr_template(uint8_t *h, uint16_t port, const struct rte_ether_addr *mac, uint8_t n_vlan,
	     const uint16_t tci[2], const rte_be16_t tpid[2], uint16_t sid)
{
	struct pppoe_hdr ph = {
		.ver_type = PPPOE_VER_TYPE,
		.code = PPPOE_CODE_SESS,
		.sid = rte_cpu_to_be_16(sid),
		.len = 0,
	};
	rte_be16_t v;
	unsigned int i, off = 2 * RTE_ETHER_ADDR_LEN;

	memcpy(h, mac, RTE_ETHER_ADDR_LEN);
	memcpy(h + RTE_ETHER_ADDR_LEN, &pppoe_g.ports[port].mac, RTE_ETHER_ADDR_LEN);
	for (i = 0; i < n_vlan; i++) {
		memcpy(h + off, &tpid[i], 2);
		v = rte_cpu_to_be_16(tci[i]);
		memcpy(h + off + 2, &v, 2);
		off += RTE_VLAN_HLEN;
	}
	v = rte_cpu_to_be_16(EGW_ETHER_TYPE_PPPOE_SESS);
	memcpy(h + off, &v, 2);
	off += 2;
	memcpy(h + off, &ph, sizeof(ph));
	return (uint8_t)(off + sizeof(ph));
}

struct pppoe_sess *
pppoe_sess_create(uint16_t port, const struct rte_ether_addr *mac, uint8_t n_vlan,
		  const uint16_t tci[2], const rte_be16_t tpid[2], uint16_t max_payload,
		  enum pppoe_refuse *why)
{
	const struct pppoe_conf *c = &pppoe_g.conf;
	unsigned int limit = c->max_sessions != 0 ? RTE_MIN(c->max_sessions, tab.size) : tab.size;
	struct pppoe_sess_fp *fp;
	struct pppoe_sess *s;
	uint64_t cnt[4];
	uint32_t sid;
	unsigned int i;

	*why = PPPOE_REFUSE_NONE;
	if (pppoe_dp.fp_tab == NULL || port >= RTE_MAX_ETHPORTS || n_vlan > 2 ||
	    (n_vlan > 0 && (tci == NULL || tpid == NULL))) {
		*why = PPPOE_REFUSE_LIMIT;
		return NULL;
	}
	if (tab.nb_used >= limit || tab.free_head == SID_NONE) {
		*why = PPPOE_REFUSE_LIMIT;
		return NULL;
	}
	if (c->max_per_mac != 0 && mac_count(mac) >= c->max_per_mac) {
		*why = PPPOE_REFUSE_PER_MAC;
		return NULL;
	}
	if (c->max_starting != 0 && tab.nb_state[EGW_PPPOE_S_NEGOTIATING] >= c->max_starting) {
		*why = PPPOE_REFUSE_STARTING;
		return NULL;
	}
	sid = tab.free_head;
	s = &tab.sess[sid];
	/* counted first: the only step that can fail */
	if (mac_count_add(mac, 1) < 0) {
		*why = PPPOE_REFUSE_LIMIT;
		return NULL;
	}
	tab.free_head = s->next_free;
	if (tab.free_head == SID_NONE)
		tab.free_tail = SID_NONE;

	/* The slot is FREE: no data-path thread reads these fields until the
	 * release store in state_set(). */
	fp = s->fp;
	/* everything but the state, which a worker may load for a stray frame
	 * of this id meanwhile: it is FREE and stays so until state_set() */
	static_assert(offsetof(struct pppoe_sess_fp, state) == 0 &&
			      sizeof(fp->state) == sizeof(uint32_t),
		      "the state is the first word of a slot");
	memset((uint8_t *)fp + sizeof(fp->state), 0, sizeof(*fp) - sizeof(fp->state));
	fp->port = port;
	fp->sid = (uint16_t)sid;
	fp->mac = *mac;
	fp->n_vlan = n_vlan;
	for (i = 0; i < n_vlan; i++)
		fp->vid[i] = tci[i] & RTE_VLAN_ID_MASK;
	/* RFC 2516: 1492 until LCP says otherwise; RFC 4638: the granted
	 * PPP-Max-Payload */
	fp->mru = max_payload != 0 ? max_payload : EGW_PPPOE_MRU_DEF;
	mss_compute(fp->mru, &fp->mss4, &fp->mss6);
	fp->hdr_len = hdr_template(fp->hdr, port, mac, n_vlan, tci, tpid, (uint16_t)sid);

	/* The previous holder of the id was freed after a grace period, so no
	 * context counts for this id now: a stable snapshot. */
	pppoe_fast_sess_counters((uint16_t)sid, cnt);
	memcpy(tab.base[sid], cnt, sizeof(cnt));

	memset(s, 0, sizeof(*s));
	s->fp = fp;
	s->sid = (uint16_t)sid;
	s->port = port;
	s->mac = *mac;
	s->n_vlan = n_vlan;
	for (i = 0; i < n_vlan; i++) {
		s->tci[i] = tci[i];
		s->tpid[i] = tpid[i];
	}
	s->max_payload = max_payload;
	s->state = EGW_PPPOE_S_FREE;
	s->cause = EGW_PPPOE_CAUSE_NONE;
	s->start_tsc = rte_get_timer_cycles();
	s->next_free = SID_NONE;

	tab.nb_used++;
	tab.nb_state[EGW_PPPOE_S_FREE]++; /* state_set moves it */
	state_set(s, EGW_PPPOE_S_NEGOTIATING);
	cnt_inc(PPPOE_CNT_SESS_CREATED);
	return s;
}

struct pppoe_sess *
pppoe_sess_get(uint16_t sid)
{
	if (tab.sess == NULL || sid == 0 || sid > tab.size ||
	    tab.sess[sid].state == EGW_PPPOE_S_FREE)
		return NULL;
	return &tab.sess[sid];
}

struct pppoe_sess *
pppoe_sess_find(uint16_t sid, uint16_t port, const struct rte_ether_addr *mac, uint8_t n_vlan,
		const uint16_t vid[2])
{
	struct pppoe_sess *s = pppoe_sess_get(sid);
	unsigned int i;

	if (s == NULL || s->state == EGW_PPPOE_S_CLOSING || s->port != port ||
	    s->n_vlan != n_vlan || !rte_is_same_ether_addr(&s->mac, mac))
		return NULL;
	for (i = 0; i < n_vlan; i++)
		if ((s->tci[i] & RTE_VLAN_ID_MASK) != (vid[i] & RTE_VLAN_ID_MASK))
			return NULL;
	return s;
}

void
pppoe_sess_set_mru(struct pppoe_sess *s, uint16_t peer_mru)
{
	/* RFC 4638: above 1492 only what PPP-Max-Payload granted */
	uint16_t cap = s->max_payload != 0 ? s->max_payload : EGW_PPPOE_MRU_DEF;
	uint16_t mru = RTE_MIN(peer_mru, cap), mss4, mss6;

	mss_compute(mru, &mss4, &mss6);
	/* Plain 16-bit values the data path loads relaxed: a burst in flight
	 * uses the old or the new value, either is safe. */
	__atomic_store_n(&s->fp->mru, mru, __ATOMIC_RELAXED);
	__atomic_store_n(&s->fp->mss4, mss4, __ATOMIC_RELAXED);
	__atomic_store_n(&s->fp->mss6, mss6, __ATOMIC_RELAXED);
}

/* Delete a route. The key slot returns to the table's free slots after a
 * grace period (the hash's RCU defer queue). */
static void
route_del(struct rte_hash *h, const void *key)
{
	int32_t pos = rte_hash_del_key(h, key);

	/* without an RCU variable nobody reads concurrently: free at once */
	if (pos >= 0 && pppoe_g.qsbr == NULL)
		rte_hash_free_key_with_position(h, pos);
}

/* The application's route of one NCP of s (pppoe_g.route). */
static int
app_route(bool add, struct pppoe_sess *s, unsigned int ncp)
{
	const struct pppoe_sess_fp *fp = s->fp;
	uint8_t a[16] = {0};

	if (ncp == PPPOE_NCP_IP4) {
		memcpy(a, &fp->ip4, 4);
		return pppoe_g.route(add, s->sid, AF_INET, a, 32, pppoe_g.route_arg);
	}
	memcpy(a, fp->ip6_prefix, 8);
	return pppoe_g.route(add, s->sid, AF_INET6, a, 64, pppoe_g.route_arg);
}

int
pppoe_sess_bind(struct pppoe_sess *s, unsigned int ncp)
{
	struct pppoe_sess_fp *fp = s->fp;
	struct rte_hash *h;
	const void *key;
	void *data;

	if (ncp != PPPOE_NCP_IP4 && ncp != PPPOE_NCP_IP6)
		return -EINVAL;
	if (s->state != EGW_PPPOE_S_NEGOTIATING && s->state != EGW_PPPOE_S_BOUND)
		return -EINVAL;
	if (fp->ncp & ncp)
		return 0;
	if (pppoe_g.route != NULL) {
		int rc = app_route(true, s, ncp);

		if (rc < 0)
			return rc;
		goto published;
	}
	if (ncp == PPPOE_NCP_IP4) {
		h = pppoe_dp.route4;
		key = &fp->ip4;
	} else {
		h = pppoe_dp.route6;
		key = fp->ip6_prefix;
	}
	/* rte_hash_add_key_data() would silently move another session's route */
	if (rte_hash_lookup_data(h, key, &data) >= 0)
		return data == fp ? 0 : -EEXIST;
	/* The insert publishes the key with a release store that pairs with the
	 * readers' acquire loads in rte_hash_lookup_bulk_data(); readers that
	 * find it still check the NCP bit below before they use the session. */
	if (rte_hash_add_key_data(h, key, fp) < 0)
		return -ENOSPC;
published:
	/* Pairs with the acquire load of fp->ncp in fast.c (decap_frame,
	 * encap_burst): the address is visible before the bit. */
	__atomic_store_n(&fp->ncp, (uint8_t)(fp->ncp | ncp), __ATOMIC_RELEASE);
	if (s->state == EGW_PPPOE_S_NEGOTIATING) {
		/* its filters, published with the state */
		pppoe_policy_attach(s);
		s->bound_tsc = rte_rdtsc();
		state_set(s, EGW_PPPOE_S_BOUND);
		cnt_inc(PPPOE_CNT_SESS_BOUND);
		/* a login that worked ends the MAC's hold after failures */
		pppoe_disc_login_ok(&s->mac);
	}
	return 0;
}

static void
routes_del(struct pppoe_sess *s, unsigned int ncp)
{
	struct pppoe_sess_fp *fp = s->fp;

	if (pppoe_g.route != NULL) {
		if (ncp & fp->ncp & PPPOE_NCP_IP4)
			app_route(false, s, PPPOE_NCP_IP4);
		if (ncp & fp->ncp & PPPOE_NCP_IP6)
			app_route(false, s, PPPOE_NCP_IP6);
	} else {
		if (ncp & fp->ncp & PPPOE_NCP_IP4)
			route_del(pppoe_dp.route4, &fp->ip4);
		if (ncp & fp->ncp & PPPOE_NCP_IP6)
			route_del(pppoe_dp.route6, fp->ip6_prefix);
	}
	/* Pairs with the acquire loads of fp->ncp in fast.c: a thread that
	 * still finds the route sees the bit clear and leaves the packet. */
	__atomic_store_n(&fp->ncp, (uint8_t)(fp->ncp & ~ncp), __ATOMIC_RELEASE);
}

void
pppoe_sess_unbind(struct pppoe_sess *s, unsigned int ncp)
{
	ncp &= PPPOE_NCP_IP4 | PPPOE_NCP_IP6;
	if (s->state != EGW_PPPOE_S_BOUND || (s->fp->ncp & ncp) == 0)
		return;
	routes_del(s, ncp);
	/* No NCP left: negotiating again (IP frames wait on the data path) */
	if ((s->fp->ncp & (PPPOE_NCP_IP4 | PPPOE_NCP_IP6)) == 0)
		state_set(s, EGW_PPPOE_S_NEGOTIATING);
}

/* Set or clear a flag of fp->ncp, which the data path loads with acquire. */
static void
ncp_flag(struct pppoe_sess *s, uint8_t flag, bool on)
{
	uint8_t ncp = s->fp->ncp;

	ncp = on ? (uint8_t)(ncp | flag) : (uint8_t)(ncp & ~flag);
	__atomic_store_n(&s->fp->ncp, ncp, __ATOMIC_RELEASE);
}

void
pppoe_sess_ip6_noprefix(struct pppoe_sess *s, bool on)
{
	ncp_flag(s, PPPOE_NCP_IP6_NOPFX, on);
}

void
pppoe_sess_ncp_acksent(struct pppoe_sess *s, unsigned int ncp, bool on)
{
	if (s->state != EGW_PPPOE_S_FREE && s->state != EGW_PPPOE_S_CLOSING)
		ncp_flag(s, ncp == PPPOE_NCP_IP4 ? PPPOE_NCP_IP4_ACKSENT : PPPOE_NCP_IP6_ACKSENT,
			 on);
}

void
pppoe_sess_close(struct pppoe_sess *s, enum egw_pppoe_cause cause, bool send_padt)
{
	if (s == NULL || s->state == EGW_PPPOE_S_FREE || s->state == EGW_PPPOE_S_CLOSING)
		return;
	routes_del(s, PPPOE_NCP_IP4 | PPPOE_NCP_IP6);
	state_set(s, EGW_PPPOE_S_CLOSING);
	s->cause = cause;
	/* the application's routes to it go before the grace period starts */
	ppp_sess_closing(s);
	if (send_padt)
		pppoe_disc_send_padt(s, NULL);
	if (s->ppp != NULL)
		ppp_sess_stop(s);
	if ((unsigned int)cause < EGW_PPPOE_CAUSE_MAX)
		cnt_inc((enum pppoe_cnt)(PPPOE_CNT_CLOSED_NONE + cause));
	if (cause == EGW_PPPOE_CAUSE_AUTH_FAIL)
		pppoe_disc_login_failed(&s->mac);
	/* Every data-path thread reports quiescent after this token before the
	 * slot may be freed (rte_rcu_qsbr_start is a release store of the
	 * token: the CLOSING state is visible to readers that see it). */
	s->free_token = pppoe_g.qsbr != NULL ? rte_rcu_qsbr_start(pppoe_g.qsbr) : 0;
	s->next_free = SID_NONE;
	if (tab.closing_tail != SID_NONE)
		tab.sess[tab.closing_tail].next_free = s->sid;
	else
		tab.closing_head = s->sid;
	tab.closing_tail = s->sid;
}

unsigned int
pppoe_sess_service(void)
{
	unsigned int n = 0;

	/* Tokens grow in close order: stop at the first not yet passed. */
	while (tab.closing_head != SID_NONE) {
		struct pppoe_sess *s = &tab.sess[tab.closing_head];

		if (pppoe_g.qsbr != NULL &&
		    rte_rcu_qsbr_check(pppoe_g.qsbr, s->free_token, false) != 1)
			break;
		tab.closing_head = s->next_free;
		if (tab.closing_head == SID_NONE)
			tab.closing_tail = SID_NONE;

		if (s->ppp != NULL)
			ppp_sess_free(s);
		mac_count_add(&s->mac, -1);
		state_set(s, EGW_PPPOE_S_FREE);
		tab.nb_used--;
		tab.nb_state[EGW_PPPOE_S_FREE]--; /* free slots are not counted */
		/* last in the FIFO: reused as late as possible */
		s->next_free = SID_NONE;
		if (tab.free_tail != SID_NONE)
			tab.sess[tab.free_tail].next_free = s->sid;
		else
			tab.free_head = s->sid;
		tab.free_tail = s->sid;
		cnt_inc(PPPOE_CNT_SESS_FREED);
		n++;
	}
	return n;
}

unsigned int
pppoe_sess_count(void)
{
	return tab.nb_used;
}

unsigned int
pppoe_sess_starting(void)
{
	return tab.nb_state[EGW_PPPOE_S_NEGOTIATING];
}

struct pppoe_sess_fp *
pppoe_route4_lookup(rte_be32_t dst)
{
	void *data;

	if (pppoe_dp.route4 == NULL || rte_hash_lookup_data(pppoe_dp.route4, &dst, &data) < 0)
		return NULL;
	return data;
}

struct pppoe_sess_fp *
pppoe_route6_lookup(const uint8_t dst[16])
{
	void *data;

	if (pppoe_dp.route6 == NULL || rte_hash_lookup_data(pppoe_dp.route6, dst, &data) < 0)
		return NULL;
	return data;
}

struct rte_hash *
pppoe_route_tab(unsigned int ncp)
{
	return ncp == PPPOE_NCP_IP4 ? pppoe_dp.route4 : pppoe_dp.route6;
}

/* ---- public: sessions ---- */

static void
sess_info(const struct pppoe_sess *s, struct egw_pppoe_session_info *info)
{
	const struct pppoe_sess_fp *fp = s->fp;
	uint64_t cnt[4];
	unsigned int i;

	memset(info, 0, sizeof(*info));
	info->sid = s->sid;
	info->port = s->port;
	info->mac = s->mac;
	info->n_vlan = s->n_vlan;
	for (i = 0; i < s->n_vlan; i++)
		info->vlan[i] = s->tci[i] & RTE_VLAN_ID_MASK;
	info->state = s->state;
	info->mru = fp->mru;
	info->ip4 = fp->ip4;
	memcpy(info->ip6, fp->ip6_prefix, sizeof(fp->ip6_prefix));
	info->uptime_s = (rte_get_timer_cycles() - s->start_tsc) / rte_get_timer_hz();
	pppoe_fast_sess_counters(s->sid, cnt);
	/* a context freed since creation takes its counts with it: never below 0 */
	info->rx_pkts = cnt[0] > tab.base[s->sid][0] ? cnt[0] - tab.base[s->sid][0] : 0;
	info->rx_bytes = cnt[1] > tab.base[s->sid][1] ? cnt[1] - tab.base[s->sid][1] : 0;
	info->tx_pkts = cnt[2] > tab.base[s->sid][2] ? cnt[2] - tab.base[s->sid][2] : 0;
	info->tx_bytes = cnt[3] > tab.base[s->sid][3] ? cnt[3] - tab.base[s->sid][3] : 0;
	info->ctrl_rx = s->ctrl_rx;
	info->ctrl_tx = s->ctrl_tx;
	if (s->ppp != NULL)
		ppp_sess_info(s, info);
}

int
egw_pppoe_session_walk(int (*fn)(const struct egw_pppoe_session_info *s, void *arg), void *arg)
{
	return egw_pppoe_session_walk_from(1, fn, arg);
}

int
egw_pppoe_session_walk_from(unsigned int first,
			    int (*fn)(const struct egw_pppoe_session_info *s, void *arg), void *arg)
{
	struct egw_pppoe_session_info info;
	unsigned int sid;
	int rc;

	for (sid = RTE_MAX(first, 1u); sid <= tab.size; sid++) {
		if (tab.sess[sid].state == EGW_PPPOE_S_FREE)
			continue;
		sess_info(&tab.sess[sid], &info);
		rc = fn(&info, arg);
		if (rc != 0)
			return rc;
	}
	return 0;
}

unsigned int
egw_pppoe_session_count(unsigned int count[4])
{
	unsigned int i;

	if (count != NULL) {
		for (i = 0; i < 4; i++)
			count[i] = tab.nb_state[i];
		count[EGW_PPPOE_S_FREE] = tab.size - tab.nb_used;
	}
	return tab.nb_used;
}

int
egw_pppoe_session_clear(uint16_t sid)
{
	struct pppoe_sess *s = pppoe_sess_get(sid);

	if (s == NULL)
		return -ENOENT;
	if (s->state != EGW_PPPOE_S_CLOSING)
		ppp_sess_terminate(s, EGW_PPPOE_CAUSE_ADMIN);
	return 0;
}

unsigned int
egw_pppoe_session_clear_all(void)
{
	unsigned int sid, n = 0;

	for (sid = 1; sid <= tab.size; sid++) {
		struct pppoe_sess *s = &tab.sess[sid];

		if (s->state == EGW_PPPOE_S_NEGOTIATING || s->state == EGW_PPPOE_S_BOUND) {
			ppp_sess_terminate(s, EGW_PPPOE_CAUSE_ADMIN);
			n++;
		}
	}
	return n;
}

int
egw_pppoe_session_framed(uint16_t sid, bool on)
{
	struct pppoe_sess *s;

	if (tab.sess == NULL || sid == 0 || sid > tab.size)
		return -ENOENT;
	s = &tab.sess[sid];
	if (s->state != EGW_PPPOE_S_NEGOTIATING && s->state != EGW_PPPOE_S_BOUND)
		return -ENOENT;
	ncp_flag(s, PPPOE_NCP_FRAMED, on);
	return 0;
}
