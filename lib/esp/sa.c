/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * SA database: one lock-free rte_hash per direction keyed by SPI (workers
 * read the inbound one; the outbound one serves the control path and policy
 * resolution), SAs published by the hash insert and freed, keys wiped, after
 * an RCU grace period. Also the control-path service: sequence numbers
 * persisted ahead of use, lifetimes.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_jhash.h>
#include <rte_malloc.h>
#include <rte_per_lcore.h>

#include "esp_private.h"
#include "esp_state.h"

RTE_LOG_REGISTER_DEFAULT(egw_esp_logtype, NOTICE);

struct rte_rcu_qsbr *esp_qsbr;

static struct rte_hash *sa_tab[2];
/* The SAs of each table, packed, for the control path's walks (the
 * service, the search by key, egw_esp_sa_walk()): a walk of sa_tab by
 * rte_hash_iterate() reads every bucket of the 8,192 entries (64 KiB a
 * table) whatever the number of SAs, and egw_esp_service() walks both on
 * every control poll. Written with sa_tab, on the control path only. */
static struct egw_esp_sa *sa_live[2][EGW_ESP_MAX_SA];
static uint32_t n_live[2];

/* sa out of the live SAs of direction dir: the last takes its place (a
 * scan: deletes are rare, and no index to keep right) */
static void
live_remove(int dir, const struct egw_esp_sa *sa)
{
	uint32_t i;

	for (i = 0; i < n_live[dir]; i++)
		if (sa_live[dir][i] == sa) {
			sa_live[dir][i] = sa_live[dir][--n_live[dir]];
			sa_live[dir][n_live[dir]] = NULL;
			return;
		}
}
static IMB_MGR *ctrl_mgr; /* key schedules and fingerprints on the control path */
void (*esp_wake)(void);
static uint16_t natt_refs[65536];

/*
 * edgegw's own addresses for ESP: the outer destinations ESP and NAT-T are
 * processed for (everything else is transit and forwarded). Keyed by
 * family + address; the data is a reference count: the tunnel destination
 * of each inbound tunnel-mode SA, and each address the application
 * registers (egw_esp_local_addr_add, for transport mode). Read lock-free by
 * the workers.
 */
#define LOCAL_MAX (EGW_ESP_MAX_SA + 1024)
struct local_key {
	uint8_t family;
	uint8_t a[16];
};
static struct rte_hash *local_tab;

/*
 * The source of ICMP errors lib/esp makes where no tunnel address fits: one
 * local address per family. Two slots: the control path writes the one not
 * published, publishes it (release), and waits a grace period before it may
 * write the other again, so a worker never reads a slot being written.
 */
static struct {
	uint8_t a[2][16];
	int cur; /* published slot, -1 = none */
} icmp_src[2] = {{.cur = -1}, {.cur = -1}};

/*
 * Sequence numbers persisted per extension of an SA's limit, extended when
 * less than half of the block is left. A new SA (and so every restart)
 * reserves SEQ_BLOCK_MIN: a crash loop uses up a 32-bit key only after
 * 2^32 / 2^18 = 16,384 restarts. The block doubles, up to SEQ_BLOCK_MAX,
 * whenever the previous extension is less than a second old, so a fast SA
 * writes the file a few times a second at most (at 10 Mpps with 4M blocks,
 * every 0.2 s), and halves again when an extension comes after 10 s.
 */
#define SEQ_BLOCK_MIN (UINT64_C(1) << 18)
#define SEQ_BLOCK_MAX (UINT64_C(1) << 22)

static const char *const drop_names[] = {
#define EGW_ESP_DROP(e, name, desc) name,
#include "egw_esp_drop.def"
#undef EGW_ESP_DROP
};
static const char *const drop_descs[] = {
#define EGW_ESP_DROP(e, name, desc) desc,
#include "egw_esp_drop.def"
#undef EGW_ESP_DROP
};

static const struct {
	const char *name;
	uint8_t key_len; /* with the salt */
} aeads[EGW_ESP_AEAD_MAX] = {
	[EGW_ESP_AES128_GCM] = {"aes-128-gcm", 16 + ESP_SALT_LEN},
	[EGW_ESP_AES256_GCM] = {"aes-256-gcm", 32 + ESP_SALT_LEN},
	[EGW_ESP_CHACHA20_POLY1305] = {"chacha20-poly1305", 32 + ESP_SALT_LEN},
};

const char *
egw_esp_drop_name(enum egw_esp_drop r)
{
	return (unsigned int)r < EGW_ESP_DROP_MAX ? drop_names[r] : "?";
}

const char *
egw_esp_drop_desc(enum egw_esp_drop r)
{
	return (unsigned int)r < EGW_ESP_DROP_MAX ? drop_descs[r] : "?";
}

const char *
egw_esp_aead_name(enum egw_esp_aead a)
{
	return (unsigned int)a < EGW_ESP_AEAD_MAX ? aeads[a].name : "?";
}

unsigned int
egw_esp_aead_key_len(enum egw_esp_aead a)
{
	return (unsigned int)a < EGW_ESP_AEAD_MAX ? aeads[a].key_len : 0;
}

static uint32_t
spi_hash(const void *key, uint32_t len, uint32_t init)
{
	RTE_SET_USED(len);
	return rte_jhash_1word(*(const uint32_t *)key, init);
}

int
egw_esp_init(struct rte_rcu_qsbr *qs)
{
	static const char *const names[2] = {"egw_esp_sa_out", "egw_esp_sa_in"};
	struct rte_hash_parameters hp = {
		.entries = EGW_ESP_MAX_SA,
		.key_len = sizeof(uint32_t),
		.hash_func = spi_hash,
		.socket_id = SOCKET_ID_ANY,
		/* lock-free readers; key slots are freed by us after a grace period */
		.extra_flag = RTE_HASH_EXTRA_FLAGS_RW_CONCURRENCY_LF,
	};
	int rc, d;

	if (ctrl_mgr != NULL)
		return -EALREADY;
	ctrl_mgr = alloc_mb_mgr(0);
	if (ctrl_mgr == NULL)
		return -ENOMEM;
	init_mb_mgr_auto(ctrl_mgr, NULL);
	if (imb_get_errno(ctrl_mgr) != 0) {
		ESP_LOG(ERR, "IPsec-MB: %s", imb_get_strerror(imb_get_errno(ctrl_mgr)));
		free_mb_mgr(ctrl_mgr);
		ctrl_mgr = NULL;
		return -ENOTSUP;
	}
	for (d = 0; d < 2; d++) {
		hp.name = names[d];
		sa_tab[d] = rte_hash_create(&hp);
		if (sa_tab[d] == NULL) {
			rc = -ENOMEM;
			goto fail;
		}
	}
	hp.name = "egw_esp_local";
	hp.entries = LOCAL_MAX;
	hp.key_len = sizeof(struct local_key);
	hp.hash_func = NULL; /* the default (CRC32) */
	local_tab = rte_hash_create(&hp);
	if (local_tab == NULL) {
		rc = -ENOMEM;
		goto fail;
	}
	rc = esp_spd_init();
	if (rc < 0)
		goto fail;
	esp_qsbr = qs;
	return 0;
fail:
	for (d = 0; d < 2; d++) {
		rte_hash_free(sa_tab[d]);
		sa_tab[d] = NULL;
	}
	rte_hash_free(local_tab);
	local_tab = NULL;
	free_mb_mgr(ctrl_mgr);
	ctrl_mgr = NULL;
	return rc;
}

static void
sa_free(struct egw_esp_sa *sa)
{
	if (sa == NULL)
		return;
	explicit_bzero(&sa->key, sizeof(sa->key));
	explicit_bzero(sa->salt, sizeof(sa->salt));
	rte_free(sa->replay);
	rte_free(sa);
}

static void
grace_period(void)
{
	if (esp_qsbr != NULL)
		rte_rcu_qsbr_synchronize(esp_qsbr, RTE_QSBR_THRID_INVALID);
}

void
egw_esp_fini(void)
{
	const void *key;
	void *data;
	uint32_t it;
	int d;

	if (ctrl_mgr == NULL)
		return;
	esp_spd_fini();
	grace_period();
	for (d = 0; d < 2; d++) {
		it = 0;
		while (rte_hash_iterate(sa_tab[d], &key, &data, &it) >= 0)
			sa_free(data);
		rte_hash_free(sa_tab[d]);
		sa_tab[d] = NULL;
		memset(sa_live[d], 0, n_live[d] * sizeof(sa_live[d][0]));
		n_live[d] = 0;
	}
	memset(natt_refs, 0, sizeof(natt_refs));
	icmp_src[0].cur = icmp_src[1].cur = -1;
	rte_hash_free(local_tab);
	local_tab = NULL;
	esp_state_close();
	free_mb_mgr(ctrl_mgr);
	ctrl_mgr = NULL;
	esp_qsbr = NULL;
}

struct egw_esp_sa *
esp_sa_find(uint32_t spi, enum egw_esp_dir dir)
{
	void *data;

	if (sa_tab[dir & 1] == NULL || rte_hash_lookup_data(sa_tab[dir & 1], &spi, &data) < 0)
		return NULL;
	return data;
}

struct egw_esp_sa *
esp_sa_lookup_in(uint32_t spi)
{
	void *data;

	if (rte_hash_lookup_data(sa_tab[EGW_ESP_DIR_IN], &spi, &data) < 0)
		return NULL;
	return data;
}

void
esp_sa_lookup_in_bulk(const uint32_t spi[], unsigned int n, struct egw_esp_sa *sa[])
{
	const void *keys[RTE_HASH_LOOKUP_BULK_MAX];
	void *data[RTE_HASH_LOOKUP_BULK_MAX];
	unsigned int i, done, k;
	uint64_t hits;

	/* one SPI for the whole burst is the common case: one lookup */
	for (i = 1; i < n && spi[i] == spi[0]; i++)
		;
	if (n != 0 && i == n) {
		struct egw_esp_sa *s = esp_sa_lookup_in(spi[0]);

		for (i = 0; i < n; i++)
			sa[i] = s;
		return;
	}
	/* rte_hash takes at most RTE_HASH_LOOKUP_BULK_MAX keys a call */
	for (done = 0; done < n; done += k) {
		k = RTE_MIN(n - done, (unsigned int)RTE_HASH_LOOKUP_BULK_MAX);
		for (i = 0; i < k; i++)
			keys[i] = &spi[done + i];
		hits = 0;
		if (rte_hash_lookup_bulk_data(sa_tab[EGW_ESP_DIR_IN], keys, k, &hits, data) < 0)
			hits = 0;
		for (i = 0; i < k; i++)
			sa[done + i] = (hits >> i) & 1 ? data[i] : NULL;
	}
}

static void
local_key_of(struct local_key *k, uint8_t family, const uint8_t *a)
{
	memset(k, 0, sizeof(*k));
	k->family = family;
	memcpy(k->a, a, family == AF_INET ? 4 : 16);
}

/*
 * The answer for the last address a worker asked about, valid while the
 * table's generation is the same: a burst of one tunnel (or of one transit
 * flow) pays one hash lookup, not one a packet. Bumped on every change.
 */
static uint64_t local_gen = 1;

struct local_cache {
	uint64_t gen;
	struct local_key k;
	bool hit;
};
static RTE_DEFINE_PER_LCORE(struct local_cache, local_last);

bool
esp_local_addr(uint8_t family, const uint8_t *a)
{
	struct local_cache *c = &RTE_PER_LCORE(local_last);
	uint64_t gen = __atomic_load_n(&local_gen, __ATOMIC_ACQUIRE);
	/* constant sizes: compares inline, not a libc call a packet */
	bool same = family == AF_INET ? memcmp(c->k.a, a, 4) == 0 : memcmp(c->k.a, a, 16) == 0;

	if (c->gen == gen && c->k.family == family && same)
		return c->hit;
	local_key_of(&c->k, family, a);
	c->hit = rte_hash_lookup(local_tab, &c->k) >= 0;
	c->gen = gen;
	return c->hit;
}

static void icmp_src_update(uint8_t family);

/* Take (delta 1) or drop (-1) a reference on a local address. */
static int
local_ref(uint8_t family, const uint8_t *a, int delta)
{
	struct local_key k;
	void *data;
	uintptr_t refs = 0;
	int32_t pos;

	local_key_of(&k, family, a);
	if (rte_hash_lookup_data(local_tab, &k, &data) >= 0)
		refs = (uintptr_t)data;
	if (delta > 0) {
		/* a new key is published by the insert (release); the count is
		 * control-path data only */
		if (rte_hash_add_key_data(local_tab, &k, (void *)(refs + 1)) < 0)
			return -ENOSPC;
		/* the workers' cached answers are stale from here on */
		__atomic_fetch_add(&local_gen, 1, __ATOMIC_RELEASE);
		icmp_src_update(family);
		return 0;
	}
	if (refs == 0)
		return -ENOENT;
	if (refs > 1)
		return rte_hash_add_key_data(local_tab, &k, (void *)(refs - 1)) < 0 ? -EIO : 0;
	pos = rte_hash_del_key(local_tab, &k);
	if (pos < 0)
		return -ENOENT;
	__atomic_fetch_add(&local_gen, 1, __ATOMIC_RELEASE);
	/* no worker reads the key slot past this */
	grace_period();
	rte_hash_free_key_with_position(local_tab, pos);
	icmp_src_update(family);
	return 0;
}

const uint8_t *
esp_icmp_src(uint8_t family)
{
	unsigned int f = family == AF_INET6;
	int cur = __atomic_load_n(&icmp_src[f].cur, __ATOMIC_ACQUIRE);

	return cur < 0 ? NULL : icmp_src[f].a[cur];
}

/* Publish a (NULL: none) as the ICMP source of its family. */
static void
icmp_src_set(unsigned int f, const uint8_t *a)
{
	int cur = icmp_src[f].cur, next = cur < 0 ? 0 : 1 - cur;

	if (a == NULL) {
		__atomic_store_n(&icmp_src[f].cur, -1, __ATOMIC_RELEASE);
	} else {
		memcpy(icmp_src[f].a[next], a, 16);
		__atomic_store_n(&icmp_src[f].cur, next, __ATOMIC_RELEASE);
	}
	/* nobody reads the old slot when it is written next */
	grace_period();
}

/* After a change of the local addresses: keep the ICMP source if it is
 * still local, else take any local address of the family. */
static void
icmp_src_update(uint8_t family)
{
	unsigned int f = family == AF_INET6;
	const uint8_t *cur = esp_icmp_src(family);
	const void *key;
	void *data;
	uint32_t it = 0;

	if (cur != NULL && esp_local_addr(family, cur))
		return;
	while (rte_hash_iterate(local_tab, &key, &data, &it) >= 0) {
		const struct local_key *k = key;

		if (k->family == family) {
			icmp_src_set(f, k->a);
			return;
		}
	}
	if (cur != NULL)
		icmp_src_set(f, NULL);
}

static bool
local_addr_ok(const struct egw_esp_addr *a)
{
	return a != NULL && (a->family == AF_INET || a->family == AF_INET6);
}

int
egw_esp_local_addr_add(const struct egw_esp_addr *a)
{
	if (local_tab == NULL)
		return -EINVAL;
	if (!local_addr_ok(a))
		return -EINVAL;
	return local_ref(a->family, a->a, 1);
}

int
egw_esp_local_addr_del(const struct egw_esp_addr *a)
{
	if (local_tab == NULL)
		return -EINVAL;
	if (!local_addr_ok(a))
		return -EINVAL;
	return local_ref(a->family, a->a, -1);
}

bool
esp_natt_port(rte_be16_t port_be)
{
	return __atomic_load_n(&natt_refs[rte_be_to_cpu_16(port_be)], __ATOMIC_RELAXED) != 0;
}

unsigned int
egw_esp_sa_count(enum egw_esp_dir dir)
{
	return sa_tab[dir & 1] == NULL ? 0 : (unsigned int)rte_hash_count(sa_tab[dir & 1]);
}

/* A fingerprint of key + salt for the state file: SHA-256 of a label, the
 * algorithm and the key, truncated. It tells "same key" from "new key"
 * without storing the key. */
static void
key_fingerprint(const struct egw_esp_sa_conf *c, uint8_t fp[16])
{
	uint8_t buf[32 + EGW_ESP_KEY_MAX];
	uint8_t dig[32];
	size_t len;

	memset(buf, 0, sizeof(buf));
	memcpy(buf, "edgegw-esp-seq-state-v1", 23);
	buf[23] = (uint8_t)c->aead;
	len = 32;
	memcpy(buf + len, c->key, c->key_len);
	len += c->key_len;
	IMB_SHA256(ctrl_mgr, buf, len, dig);
	memcpy(fp, dig, 16);
	explicit_bzero(buf, sizeof(buf));
	explicit_bzero(dig, sizeof(dig));
}

static bool
addr_set(const struct egw_esp_addr *a)
{
	return a->family == AF_INET || a->family == AF_INET6;
}

static int
sa_conf_check(const struct egw_esp_sa_conf *c, char *err, size_t errlen)
{
	if (c->spi < 256) {
		snprintf(err, errlen, "SPI %u: 0 and 1-255 are reserved (RFC 4303)", c->spi);
		return -EINVAL;
	}
	if (c->dir != EGW_ESP_DIR_OUT && c->dir != EGW_ESP_DIR_IN) {
		snprintf(err, errlen, "direction must be in or out");
		return -EINVAL;
	}
	if ((unsigned int)c->aead >= EGW_ESP_AEAD_MAX) {
		snprintf(err, errlen, "unknown AEAD");
		return -EINVAL;
	}
	if (c->key_len != aeads[c->aead].key_len) {
		snprintf(err, errlen, "%s needs %u key bytes (key + 4-byte salt), got %u",
			 aeads[c->aead].name, aeads[c->aead].key_len, c->key_len);
		return -EINVAL;
	}
	if (c->mode == EGW_ESP_MODE_TUNNEL) {
		if (!addr_set(&c->tun_src) || !addr_set(&c->tun_dst)) {
			snprintf(err, errlen, "tunnel mode needs src and dst addresses");
			return -EINVAL;
		}
		if (c->tun_src.family != c->tun_dst.family) {
			snprintf(err, errlen, "tunnel src and dst must be the same family");
			return -EINVAL;
		}
	} else if (c->mode == EGW_ESP_MODE_TRANSPORT) {
		if (addr_set(&c->tun_src) || addr_set(&c->tun_dst)) {
			snprintf(err, errlen, "transport mode takes no src/dst (tunnel endpoints)");
			return -EINVAL;
		}
	} else {
		snprintf(err, errlen, "mode must be transport or tunnel");
		return -EINVAL;
	}
	if (c->window != 0 && (c->window < EGW_ESP_WINDOW_MIN || c->window > EGW_ESP_WINDOW_MAX)) {
		snprintf(err, errlen, "replay window %u outside %u..%u", c->window,
			 EGW_ESP_WINDOW_MIN, EGW_ESP_WINDOW_MAX);
		return -EINVAL;
	}
	if (c->mtu != 0 && c->mtu < EGW_ESP_MTU_MIN) {
		snprintf(err, errlen, "MTU %u below %u", c->mtu, EGW_ESP_MTU_MIN);
		return -EINVAL;
	}
	if (!c->esn && c->seq_start > UINT32_MAX) {
		snprintf(err, errlen, "sequence number %" PRIu64 " needs ESN (above 2^32-1)",
			 c->seq_start);
		return -EINVAL;
	}
	if ((c->life_packets.soft != 0 && c->life_packets.hard != 0 &&
	     c->life_packets.soft > c->life_packets.hard) ||
	    (c->life_bytes.soft != 0 && c->life_bytes.hard != 0 &&
	     c->life_bytes.soft > c->life_bytes.hard)) {
		snprintf(err, errlen, "soft lifetime above the hard lifetime");
		return -EINVAL;
	}
	return 0;
}

/* Highest sequence number an SA may ever use. */
static uint64_t
seq_max(const struct egw_esp_sa *sa)
{
	return sa->esn ? UINT64_MAX - 1 : UINT32_MAX;
}

/* The number past which the workers wake the control path to extend the
 * limit: service_seq()'s own test, so a sleeping control path is woken by
 * the run that makes it true (UINT64_MAX: the limit is final). */
static uint64_t
seq_wake_at(const struct egw_esp_sa *sa, uint64_t limit)
{
	if (limit >= seq_max(sa))
		return UINT64_MAX;
	return limit > sa->seq_block / 2 ? limit - sa->seq_block / 2 : 0;
}

static uint64_t
next_limit(const struct egw_esp_sa *sa, uint64_t from)
{
	uint64_t max = seq_max(sa);

	return from >= max - sa->seq_block ? max : from + sa->seq_block;
}

/* The live SA whose key fingerprint is fp, or NULL. */
static struct egw_esp_sa *
sa_with_key(const uint8_t fp[16])
{
	uint32_t i;
	int d;

	for (d = 0; d < 2; d++)
		for (i = 0; i < n_live[d]; i++)
			if (memcmp(sa_live[d][i]->key_fp, fp, sizeof(sa_live[d][i]->key_fp)) == 0)
				return sa_live[d][i];
	return NULL;
}

int
egw_esp_sa_add(const struct egw_esp_sa_conf *conf, char *err, size_t errlen)
{
	struct egw_esp_sa_conf c = *conf;
	struct egw_esp_sa *sa;
	uint64_t start = 1, limit;
	int rc;

	if (ctrl_mgr == NULL) {
		snprintf(err, errlen, "ESP not initialised");
		return -EINVAL;
	}
	rc = sa_conf_check(&c, err, errlen);
	if (rc < 0)
		goto out;
	if (esp_sa_find(c.spi, c.dir) != NULL) {
		snprintf(err, errlen, "%s SA with SPI 0x%x exists",
			 c.dir == EGW_ESP_DIR_OUT ? "outbound" : "inbound", c.spi);
		rc = -EEXIST;
		goto out;
	}
	if (c.dir == EGW_ESP_DIR_OUT && !esp_state_trusted()) {
		snprintf(err, errlen, "%s",
			 esp_state_path() == NULL
				 ? "no ESP state file: set one with `esp state-file PATH` first "
				   "(sequence numbers must survive a restart)"
				 : "the ESP state file is not trustworthy: outbound SAs refused");
		rc = -EINVAL;
		goto out;
	}
	if (c.window == 0)
		c.window = EGW_ESP_WINDOW_DEF;
	if (c.mtu == 0)
		c.mtu = EGW_ESP_MTU_DEF;
	if (c.ttl == 0)
		c.ttl = 64;
	if (c.natt && c.natt_sport == 0)
		c.natt_sport = EGW_ESP_NATT_PORT;
	if (c.natt && c.natt_dport == 0)
		c.natt_dport = EGW_ESP_NATT_PORT;

	sa = rte_zmalloc("egw_esp_sa", sizeof(*sa), RTE_CACHE_LINE_SIZE);
	if (sa == NULL) {
		snprintf(err, errlen, "out of memory for the SA");
		rc = -ENOMEM;
		goto out;
	}
	sa->spi = c.spi;
	sa->seq_wake = UINT64_MAX;
	sa->spi_be = rte_cpu_to_be_32(c.spi);
	sa->dir = (uint8_t)c.dir;
	sa->mode = (uint8_t)c.mode;
	sa->aead = (uint8_t)c.aead;
	sa->esn = c.esn;
	sa->natt = c.natt;
	sa->ttl = c.ttl;
	sa->mtu = c.mtu;
	sa->natt_sport_be = rte_cpu_to_be_16(c.natt_sport);
	sa->natt_dport_be = rte_cpu_to_be_16(c.natt_dport);
	if (c.mode == EGW_ESP_MODE_TUNNEL) {
		sa->tun_family = c.tun_src.family;
		memcpy(sa->tun_src, c.tun_src.a, 16);
		memcpy(sa->tun_dst, c.tun_dst.a, 16);
	}
	sa->key_len = (uint8_t)(c.key_len - ESP_SALT_LEN);
	memcpy(sa->salt, c.key + sa->key_len, ESP_SALT_LEN);
	switch (c.aead) {
	case EGW_ESP_AES128_GCM: IMB_AES128_GCM_PRE(ctrl_mgr, c.key, &sa->key.gcm); break;
	case EGW_ESP_AES256_GCM: IMB_AES256_GCM_PRE(ctrl_mgr, c.key, &sa->key.gcm); break;
	default: memcpy(sa->key.chacha, c.key, 32); break;
	}
	sa->life_hard_packets = c.life_packets.hard ? c.life_packets.hard : UINT64_MAX;
	sa->life_hard_bytes = c.life_bytes.hard ? c.life_bytes.hard : UINT64_MAX;
	sa->life_soft_packets = c.life_packets.soft ? c.life_packets.soft : UINT64_MAX;
	sa->life_soft_bytes = c.life_bytes.soft ? c.life_bytes.soft : UINT64_MAX;
	rte_spinlock_init(&sa->lock);

	/* one key, one sequence of nonces: a key (with its salt) in use by a
	 * live SA of either direction is refused; the peer's SA with our key
	 * would number its packets from 1 under the same nonces */
	key_fingerprint(&c, sa->key_fp);
	{
		const struct egw_esp_sa *o = sa_with_key(sa->key_fp);

		if (o != NULL) {
			snprintf(err, errlen,
				 "the key of SPI 0x%x is already used by %s SA 0x%x: one key "
				 "(with its salt) per SA, in both directions (the nonces would "
				 "repeat)",
				 c.spi, o->dir == EGW_ESP_DIR_OUT ? "outbound" : "inbound", o->spi);
			rc = -EADDRINUSE;
			goto fail;
		}
	}
	if (c.dir == EGW_ESP_DIR_IN) {
		sa->replay = rte_zmalloc("egw_esp_replay", esp_replay_size(c.window),
					 RTE_CACHE_LINE_SIZE);
		if (sa->replay == NULL) {
			snprintf(err, errlen, "out of memory for the replay window");
			rc = -ENOMEM;
			goto fail;
		}
		esp_replay_init(sa->replay, c.window, c.seq_start);
		sa->seq_first = 0;
	} else {
		/* above every number the state file may have handed out for
		 * this key, under whatever SPI */
		sa->seq_block = SEQ_BLOCK_MIN;
		rc = esp_state_get(sa->key_fp, &limit);
		if (rc == 0 && limit >= start)
			start = limit + 1;
		if (c.seq_start > start)
			start = c.seq_start;
		if (start > seq_max(sa)) {
			snprintf(err, errlen,
				 "SPI 0x%x: sequence numbers of this key are used up (next %" PRIu64
				 "): use a new key",
				 c.spi, start);
			rc = -ERANGE;
			goto fail;
		}
		limit = next_limit(sa, start);
		rc = esp_state_set(sa->key_fp, limit);
		if (rc == -ENOSPC) {
			snprintf(err, errlen,
				 "the state file %s holds %u keys, its maximum: no room for a new "
				 "key (keys are never forgotten silently; 'esp state-prune' drops "
				 "the keys no SA uses, once you are sure none comes back)",
				 esp_state_path(), EGW_ESP_STATE_MAX);
			goto fail;
		}
		if (rc < 0) {
			snprintf(err, errlen, "cannot persist sequence numbers in %s: %s",
				 esp_state_path(), strerror(-rc));
			goto fail;
		}
		sa->seq_ext_tsc = rte_get_timer_cycles();
		sa->seq_first = start;
		sa->seq_next = start;
		sa->seq_limit = limit;
		sa->seq_wake = seq_wake_at(sa, limit);
	}
	explicit_bzero(c.key, sizeof(c.key));
	c.key_len = 0;
	sa->conf = c;
	esp_sa_outer_template(sa);

	/* the tunnel's outer destination is ours: ESP to it is processed */
	if (c.dir == EGW_ESP_DIR_IN && c.mode == EGW_ESP_MODE_TUNNEL &&
	    local_ref(c.tun_dst.family, c.tun_dst.a, 1) < 0) {
		snprintf(err, errlen, "local address table full (%u)", LOCAL_MAX);
		rc = -ENOSPC;
		goto fail;
	}
	/* publishes the SA: rte_hash's lock-free insert is a release store that
	 * pairs with the acquire in the readers' bucket loads */
	rc = n_live[c.dir] < EGW_ESP_MAX_SA ? rte_hash_add_key_data(sa_tab[c.dir], &c.spi, sa)
					    : -ENOSPC;
	if (rc < 0) {
		if (c.dir == EGW_ESP_DIR_IN && c.mode == EGW_ESP_MODE_TUNNEL)
			local_ref(c.tun_dst.family, c.tun_dst.a, -1);
		snprintf(err, errlen, "SA table full (%u per direction)", EGW_ESP_MAX_SA);
		rc = -ENOSPC;
		goto fail;
	}
	sa_live[c.dir][n_live[c.dir]++] = sa;
	if (c.dir == EGW_ESP_DIR_IN && c.natt)
		__atomic_fetch_add(&natt_refs[c.natt_dport], 1, __ATOMIC_RELAXED);
	rc = 0;
	goto out;
fail:
	sa_free(sa);
out:
	explicit_bzero(c.key, sizeof(c.key));
	return rc;
}

int
egw_esp_sa_del(uint32_t spi, enum egw_esp_dir dir, char *err, size_t errlen)
{
	struct egw_esp_sa *sa = esp_sa_find(spi, dir);
	int32_t pos;

	if (sa == NULL) {
		snprintf(err, errlen, "no %s SA with SPI 0x%x",
			 dir == EGW_ESP_DIR_OUT ? "outbound" : "inbound", spi);
		return -ENOENT;
	}
	/* inbound: policies that accept it only as a replaced SA let it go */
	if (sa->policy_refs != 0 && dir == EGW_ESP_DIR_IN && esp_spd_protect_refs(dir, sa) == 0) {
		int rc = esp_spd_forget_prev(dir, sa);

		if (rc < 0) {
			snprintf(err, errlen, "SA 0x%x: cannot update the policies: %s", spi,
				 strerror(-rc));
			return rc;
		}
	}
	if (sa->policy_refs != 0) {
		snprintf(err, errlen, "SA 0x%x is used by %u %s polic%s: delete %s first", spi,
			 sa->policy_refs, dir == EGW_ESP_DIR_OUT ? "outbound" : "inbound",
			 sa->policy_refs == 1 ? "y" : "ies", sa->policy_refs == 1 ? "it" : "them");
		return -EBUSY;
	}
	pos = rte_hash_del_key(sa_tab[dir], &spi);
	if (pos < 0) {
		snprintf(err, errlen, "SA 0x%x: hash delete failed", spi);
		return -ENOENT;
	}
	live_remove(dir, sa);
	if (dir == EGW_ESP_DIR_IN && sa->natt)
		__atomic_fetch_sub(&natt_refs[sa->conf.natt_dport], 1, __ATOMIC_RELAXED);
	if (dir == EGW_ESP_DIR_IN && sa->mode == EGW_ESP_MODE_TUNNEL)
		local_ref(sa->conf.tun_dst.family, sa->conf.tun_dst.a, -1);
	/* no worker holds the SA or the key slot past this */
	grace_period();
	rte_hash_free_key_with_position(sa_tab[dir], pos);
	sa_free(sa);
	return 0;
}

int
egw_esp_sa_replace(enum egw_esp_dir dir, uint32_t old_spi, uint32_t new_spi, char *err,
		   size_t errlen)
{
	struct egw_esp_sa *old, *nsa;
	const char *dn = dir == EGW_ESP_DIR_OUT ? "outbound" : "inbound";

	if (ctrl_mgr == NULL || (dir != EGW_ESP_DIR_OUT && dir != EGW_ESP_DIR_IN)) {
		snprintf(err, errlen, "ESP not initialised, or a bad direction");
		return -EINVAL;
	}
	old = esp_sa_find(old_spi, dir);
	nsa = esp_sa_find(new_spi, dir);
	if (old == NULL || nsa == NULL) {
		snprintf(err, errlen, "no %s SA with SPI 0x%x", dn,
			 old == NULL ? old_spi : new_spi);
		return -ENOENT;
	}
	if (old == nsa) {
		snprintf(err, errlen, "SA 0x%x cannot replace itself", old_spi);
		return -EINVAL;
	}
	if (__atomic_load_n(&nsa->hard_expired, __ATOMIC_RELAXED) != 0) {
		snprintf(err, errlen, "%s SA 0x%x has reached its hard lifetime", dn, new_spi);
		return -EINVAL;
	}
	return esp_spd_replace_sa(dir, old, nsa, err, errlen);
}

static void
sa_info(const struct egw_esp_sa *sa, struct egw_esp_sa_info *info)
{
	unsigned int i, r;

	memset(info, 0, sizeof(*info));
	info->conf = sa->conf;
	if (sa->dir == EGW_ESP_DIR_OUT) {
		info->seq = __atomic_load_n(&sa->seq_next, __ATOMIC_RELAXED);
		info->seq_limit = __atomic_load_n(&sa->seq_limit, __ATOMIC_RELAXED);
		info->life_packets = info->seq - sa->seq_first;
	} else {
		info->seq = __atomic_load_n(&sa->replay->top, __ATOMIC_RELAXED);
		info->life_packets = __atomic_load_n(&sa->packets_used, __ATOMIC_RELAXED);
	}
	info->life_bytes = __atomic_load_n(&sa->bytes_used, __ATOMIC_RELAXED);
	info->soft_expired = sa->soft_expired;
	info->hard_expired = __atomic_load_n(&sa->hard_expired, __ATOMIC_RELAXED) != 0;
	for (i = 0; i < EGW_ESP_MAX_CTX; i++) {
		const struct esp_sa_lstats *l = &sa->stats[i];

		info->stats.packets += __atomic_load_n(&l->packets, __ATOMIC_RELAXED);
		info->stats.bytes += __atomic_load_n(&l->bytes, __ATOMIC_RELAXED);
		for (r = 0; r < EGW_ESP_DROP_MAX; r++)
			info->stats.drop[r] += __atomic_load_n(&l->drop[r], __ATOMIC_RELAXED);
	}
}

int
egw_esp_sa_info(uint32_t spi, enum egw_esp_dir dir, struct egw_esp_sa_info *info)
{
	struct egw_esp_sa *sa = esp_sa_find(spi, dir);

	if (sa == NULL)
		return -ENOENT;
	sa_info(sa, info);
	return 0;
}

static int
spi_cmp(const void *a, const void *b)
{
	const struct egw_esp_sa *x = *(struct egw_esp_sa *const *)a;
	const struct egw_esp_sa *y = *(struct egw_esp_sa *const *)b;

	return x->spi < y->spi ? -1 : x->spi > y->spi;
}

int
egw_esp_sa_walk(int (*fn)(const struct egw_esp_sa_info *info, void *arg), void *arg)
{
	struct egw_esp_sa_info info;
	struct egw_esp_sa **list;
	uint32_t n, i;
	int d, rc = 0;

	if (ctrl_mgr == NULL)
		return 0;
	list = malloc(sizeof(*list) * EGW_ESP_MAX_SA);
	if (list == NULL)
		return -ENOMEM;
	for (d = 0; d < 2 && rc == 0; d++) {
		/* a copy, sorted by SPI for the show commands */
		n = n_live[d];
		memcpy(list, sa_live[d], sizeof(*list) * n);
		qsort(list, n, sizeof(*list), spi_cmp);
		for (i = 0; i < n && rc == 0; i++) {
			sa_info(list[i], &info);
			rc = fn(&info, arg);
		}
	}
	free(list);
	return rc;
}

/* Outbound: extend the persisted limit before the workers reach it. */
static unsigned int
service_seq(struct egw_esp_sa *sa)
{
	uint64_t next = __atomic_load_n(&sa->seq_next, __ATOMIC_RELAXED);
	uint64_t limit = sa->seq_limit, max = seq_max(sa), nl;
	int rc;

	uint64_t now, hz = rte_get_timer_hz();

	if (limit >= max || next + sa->seq_block / 2 <= limit)
		return 0;
	/* size the reservation by the rate: double it when the last one lasted
	 * less than a second, halve it after ten */
	now = rte_get_timer_cycles();
	if (now - sa->seq_ext_tsc < hz && sa->seq_block < SEQ_BLOCK_MAX)
		sa->seq_block *= 2;
	else if (now - sa->seq_ext_tsc > 10 * hz && sa->seq_block > SEQ_BLOCK_MIN)
		sa->seq_block /= 2;
	nl = next_limit(sa, next > limit ? next : limit);
	rc = esp_state_set(sa->key_fp, nl);
	if (rc < 0) {
		static uint64_t warned;

		/* the polls retry: the workers stop waking the control path */
		__atomic_store_n(&sa->seq_wake, UINT64_MAX, __ATOMIC_RELAXED);

		if (warned++ % 1000 == 0)
			ESP_LOG(ERR,
				"SA 0x%x: cannot persist sequence numbers (%s): stays at %" PRIu64,
				sa->spi, strerror(-rc), limit);
		return 0;
	}
	sa->seq_ext_tsc = now;
	__atomic_store_n(&sa->seq_wake, seq_wake_at(sa, nl), __ATOMIC_RELAXED);
	/* the numbers up to nl are on disk: workers may use them; pairs with the
	 * acquire load in the outbound path */
	__atomic_store_n(&sa->seq_limit, nl, __ATOMIC_RELEASE);
	return 1;
}

static unsigned int
service_life(struct egw_esp_sa *sa)
{
	uint64_t pkts, bytes = __atomic_load_n(&sa->bytes_used, __ATOMIC_RELAXED);

	if (sa->dir == EGW_ESP_DIR_OUT)
		pkts = __atomic_load_n(&sa->seq_next, __ATOMIC_RELAXED) - sa->seq_first;
	else
		pkts = __atomic_load_n(&sa->packets_used, __ATOMIC_RELAXED);
	if (!sa->soft_expired && (pkts >= sa->life_soft_packets || bytes >= sa->life_soft_bytes)) {
		sa->soft_expired = true;
		ESP_LOG(WARNING,
			"%s SA 0x%x: soft lifetime reached (%" PRIu64 " packets, %" PRIu64
			" bytes): rekey",
			sa->dir == EGW_ESP_DIR_OUT ? "outbound" : "inbound", sa->spi, pkts, bytes);
		return 1;
	}
	if (sa->hard_expired == 0 &&
	    (pkts >= sa->life_hard_packets || bytes >= sa->life_hard_bytes)) {
		/* workers drop on this from their next burst on */
		__atomic_store_n(&sa->hard_expired, 1, __ATOMIC_RELEASE);
		ESP_LOG(WARNING, "%s SA 0x%x: hard lifetime reached: SA stops",
			sa->dir == EGW_ESP_DIR_OUT ? "outbound" : "inbound", sa->spi);
		return 1;
	}
	return 0;
}

void
egw_esp_set_wake(void (*fn)(void))
{
	__atomic_store_n(&esp_wake, fn, __ATOMIC_RELEASE);
}

unsigned int
egw_esp_service(void)
{
	unsigned int done = 0;
	uint32_t i;
	int d;

	if (ctrl_mgr == NULL)
		return 0;
	/* neither service deletes an SA: the array holds still */
	for (d = 0; d < 2; d++)
		for (i = 0; i < n_live[d]; i++) {
			struct egw_esp_sa *sa = sa_live[d][i];

			if (d == EGW_ESP_DIR_OUT)
				done += service_seq(sa);
			done += service_life(sa);
		}
	return done;
}

int
egw_esp_state_file(const char *path, bool create, char *err, size_t errlen)
{
	if (egw_esp_sa_count(EGW_ESP_DIR_OUT) != 0) {
		snprintf(err, errlen,
			 "outbound SAs exist: delete them before changing the state file");
		return -EBUSY;
	}
	return esp_state_open(path, create, err, errlen);
}

unsigned int
egw_esp_state_keys(void)
{
	return esp_state_count();
}

static bool
key_live(const uint8_t fp[16], void *arg)
{
	RTE_SET_USED(arg);
	return sa_with_key(fp) != NULL;
}

int
egw_esp_state_prune(char *err, size_t errlen)
{
	unsigned int dropped;
	int rc;

	if (!esp_state_trusted()) {
		snprintf(err, errlen, "%s",
			 esp_state_path() == NULL ? "no state file set"
						  : "the state file is not trustworthy");
		return -EINVAL;
	}
	rc = esp_state_prune(key_live, NULL, &dropped);
	if (rc < 0) {
		snprintf(err, errlen, "cannot write %s: %s", esp_state_path(), strerror(-rc));
		return rc;
	}
	if (dropped != 0)
		ESP_LOG(WARNING, "state file %s: %u keys no SA uses forgotten (operator request)",
			esp_state_path(), dropped);
	return (int)dropped;
}

const char *
egw_esp_state_path(void)
{
	return esp_state_path();
}
