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

#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_jhash.h>
#include <rte_malloc.h>

#include "esp_private.h"
#include "esp_state.h"

RTE_LOG_REGISTER_DEFAULT(egw_esp_logtype, NOTICE);

struct rte_rcu_qsbr *esp_qsbr;

static struct rte_hash *sa_tab[2];
static IMB_MGR *ctrl_mgr; /* key schedules and fingerprints on the control path */
static uint16_t natt_refs[65536];

/* Sequence numbers persisted per extension of an SA's limit; extended when
 * less than half is left. At 10 Mpps on one SA that is a write every 0.2 s. */
#define SEQ_BLOCK (UINT64_C(1) << 22)

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
	}
	memset(natt_refs, 0, sizeof(natt_refs));
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

static uint64_t
next_limit(const struct egw_esp_sa *sa, uint64_t from)
{
	uint64_t max = seq_max(sa);

	return from >= max - SEQ_BLOCK ? max : from + SEQ_BLOCK;
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
		key_fingerprint(&c, sa->key_fp);
		/* above every number the state file may have handed out */
		rc = esp_state_get(c.spi, sa->key_fp, &limit);
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
		rc = esp_state_set(c.spi, sa->key_fp, limit);
		if (rc < 0) {
			snprintf(err, errlen, "cannot persist sequence numbers in %s: %s",
				 esp_state_path(), strerror(-rc));
			goto fail;
		}
		sa->seq_first = start;
		sa->seq_next = start;
		sa->seq_limit = limit;
	}
	explicit_bzero(c.key, sizeof(c.key));
	c.key_len = 0;
	sa->conf = c;
	esp_sa_outer_template(sa);

	/* publishes the SA: rte_hash's lock-free insert is a release store that
	 * pairs with the acquire in the readers' bucket loads */
	rc = rte_hash_add_key_data(sa_tab[c.dir], &c.spi, sa);
	if (rc < 0) {
		snprintf(err, errlen, "SA table full (%u per direction)", EGW_ESP_MAX_SA);
		rc = -ENOSPC;
		goto fail;
	}
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
	if (dir == EGW_ESP_DIR_IN && sa->natt)
		__atomic_fetch_sub(&natt_refs[sa->conf.natt_dport], 1, __ATOMIC_RELAXED);
	/* no worker holds the SA or the key slot past this */
	grace_period();
	rte_hash_free_key_with_position(sa_tab[dir], pos);
	sa_free(sa);
	return 0;
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
	const void *key;
	void *data;
	uint32_t it, n, i;
	int d, rc = 0;

	if (ctrl_mgr == NULL)
		return 0;
	list = malloc(sizeof(*list) * EGW_ESP_MAX_SA);
	if (list == NULL)
		return -ENOMEM;
	for (d = 0; d < 2 && rc == 0; d++) {
		n = 0;
		it = 0;
		while (n < EGW_ESP_MAX_SA && rte_hash_iterate(sa_tab[d], &key, &data, &it) >= 0)
			list[n++] = data;
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

	if (limit >= max || next + SEQ_BLOCK / 2 <= limit)
		return 0;
	nl = next_limit(sa, next > limit ? next : limit);
	rc = esp_state_set(sa->spi, sa->key_fp, nl);
	if (rc < 0) {
		static uint64_t warned;

		if (warned++ % 1000 == 0)
			ESP_LOG(ERR,
				"SA 0x%x: cannot persist sequence numbers (%s): stays at %" PRIu64,
				sa->spi, strerror(-rc), limit);
		return 0;
	}
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

unsigned int
egw_esp_service(void)
{
	const void *key;
	void *data;
	unsigned int done = 0;
	uint32_t it;
	int d;

	if (ctrl_mgr == NULL)
		return 0;
	for (d = 0; d < 2; d++) {
		it = 0;
		while (rte_hash_iterate(sa_tab[d], &key, &data, &it) >= 0) {
			struct egw_esp_sa *sa = data;

			if (d == EGW_ESP_DIR_OUT)
				done += service_seq(sa);
			done += service_life(sa);
		}
	}
	return done;
}

int
egw_esp_state_file(const char *path, char *err, size_t errlen)
{
	if (egw_esp_sa_count(EGW_ESP_DIR_OUT) != 0) {
		snprintf(err, errlen,
			 "outbound SAs exist: delete them before changing the state file");
		return -EBUSY;
	}
	return esp_state_open(path, err, errlen);
}

const char *
egw_esp_state_path(void)
{
	return esp_state_path();
}
