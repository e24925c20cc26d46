/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Security policy database: per direction, an ordered list of rules matched
 * on (protocol, source prefix, destination prefix) with rte_acl, after DPDK
 * examples/ipsec-secgw sp4.c and sp6.c.
 *
 * The control thread owns the rules. Every change builds a complete new
 * snapshot - one ACL context per family (NULL when the family has no rules:
 * nothing matches) and the rules in order with their SA resolved - publishes
 * it with a release store, and frees the snapshot it replaced after an RCU
 * grace period. The data path acquire-loads the snapshot once per call and
 * neither locks nor allocates.
 *
 * First match wins: the rule at position i has ACL priority
 * EGW_ESP_MAX_POLICY - i (rte_acl returns the highest) and userdata i + 1
 * (0 is rte_acl's "no match").
 *
 * Hit counters: a rule owns a slot 0 .. EGW_ESP_MAX_POLICY-1 for its whole
 * life, kept across snapshots; contexts count into c->policy_hits[dir][slot]
 * without atomics. A slot freed by a delete is free only once the grace
 * period of that delete has passed, so nothing counts into it any more when
 * a later rule takes it; that rule records the slot's sum as its base.
 */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <rte_acl.h>
#include <rte_common.h>
#include <rte_errno.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_memory.h>
#include <rte_prefetch.h>
#include <rte_rcu_qsbr.h>

#include "egw_esp.h"
#include "esp_private.h"

/*
 * Protocol of a packet whose IPv6 header chain cannot be read to its end
 * (cut short, malformed, more than SPD_IP6_EXT_MAX extension headers, or a
 * non-first fragment followed by another extension header). 255 is reserved
 * by IANA and refused in rules, so such packets match only rules with proto
 * any (-1), and of those only one that discards takes them (spd_action()).
 * A packet that really carries protocol 255 is treated the same way.
 */
#define SPD_PROTO_UNKNOWN 255
/* Extension headers skipped before giving up (RFC 8200 allows each once,
 * destination options twice). */
#define SPD_IP6_EXT_MAX 8
/* Packets ahead whose first data line is prefetched in the parse loop. */
#define SPD_PREFETCH_AHEAD 4

/*
 * What rte_acl reads of a packet, addresses in network order. rte_acl loads
 * every input field as 4 bytes, the one-byte protocol included: the padding
 * keeps that load inside the key.
 */
struct spd_key4 {
	uint8_t proto;
	uint8_t pad[3];
	uint8_t src[4];
	uint8_t dst[4];
};

struct spd_key6 {
	uint8_t proto;
	uint8_t pad[3];
	uint8_t src[16];
	uint8_t dst[16];
};

/* key4_eq()/key6_eq() compare src and dst as one run of bytes */
static_assert(offsetof(struct spd_key4, dst) == offsetof(struct spd_key4, src) + 4, "key4 layout");
static_assert(offsetof(struct spd_key6, dst) == offsetof(struct spd_key6, src) + 16, "key6 layout");
static_assert(sizeof(struct spd_key6) <= sizeof(((struct esp_spd_cache *)0)->key),
	      "flow cache key");

enum { F4_PROTO, F4_SRC, F4_DST, F4_NUM };
enum { F6_PROTO, F6_SRC0, F6_DST0 = F6_SRC0 + 4, F6_NUM = F6_DST0 + 4 };

RTE_ACL_RULE_DEF(spd_acl4, F4_NUM);
RTE_ACL_RULE_DEF(spd_acl6, F6_NUM);

static const struct rte_acl_field_def spd_defs4[F4_NUM] = {
	{.type = RTE_ACL_FIELD_TYPE_BITMASK,
	 .size = sizeof(uint8_t),
	 .field_index = F4_PROTO,
	 .input_index = F4_PROTO,
	 .offset = offsetof(struct spd_key4, proto)},
	{.type = RTE_ACL_FIELD_TYPE_MASK,
	 .size = sizeof(uint32_t),
	 .field_index = F4_SRC,
	 .input_index = F4_SRC,
	 .offset = offsetof(struct spd_key4, src)},
	{.type = RTE_ACL_FIELD_TYPE_MASK,
	 .size = sizeof(uint32_t),
	 .field_index = F4_DST,
	 .input_index = F4_DST,
	 .offset = offsetof(struct spd_key4, dst)},
};

/* IPv6 addresses as four 4-byte fields each (the widest rte_acl input). */
#define SPD_F6_WORD(idx, member, k)                                                              \
	{                                                                                        \
		.type = RTE_ACL_FIELD_TYPE_MASK, .size = sizeof(uint32_t), .field_index = (idx), \
		.input_index = (idx), .offset = offsetof(struct spd_key6, member) + 4 * (k),     \
	}

static const struct rte_acl_field_def spd_defs6[F6_NUM] = {
	{.type = RTE_ACL_FIELD_TYPE_BITMASK,
	 .size = sizeof(uint8_t),
	 .field_index = F6_PROTO,
	 .input_index = F6_PROTO,
	 .offset = offsetof(struct spd_key6, proto)},
	SPD_F6_WORD(F6_SRC0 + 0, src, 0),
	SPD_F6_WORD(F6_SRC0 + 1, src, 1),
	SPD_F6_WORD(F6_SRC0 + 2, src, 2),
	SPD_F6_WORD(F6_SRC0 + 3, src, 3),
	SPD_F6_WORD(F6_DST0 + 0, dst, 0),
	SPD_F6_WORD(F6_DST0 + 1, dst, 1),
	SPD_F6_WORD(F6_DST0 + 2, dst, 2),
	SPD_F6_WORD(F6_DST0 + 3, dst, 3),
};

/* One rule of a snapshot. */
struct spd_rule {
	struct egw_esp_policy p;
	struct egw_esp_sa *sa; /* PROTECT: the SA (counted in its policy_refs), else NULL */
	/* inbound PROTECT after egw_esp_sa_replace(): the SA replaced, still
	 * accepted until it is deleted (counted in its policy_refs) */
	struct egw_esp_sa *sa_prev;
	uint16_t slot;      /* hit counter slot, for the rule's life */
	uint64_t hits_base; /* control path: sum of the slot when the rule was added */
};

/* What the data path reads: immutable once published. */
struct spd_snap {
	struct rte_acl_ctx *acl[2]; /* [0] IPv4, [1] IPv6; NULL = no rules of that family */
	uint64_t gen;               /* never reused: the contexts' flow caches compare it */
	uint32_t n;
	uint8_t def_action; /* no match: EGW_ESP_BYPASS or ESP_ACT_DEF_DISCARD */
	struct spd_rule rule[];
};

struct spd_dir {
	/* NULL = no rules and the default bypasses; written by spd_publish() only */
	struct spd_snap *snap;
	uint32_t next_id; /* ids are never reused */
	enum egw_esp_policy_default def;
};

static struct spd_dir spd[2];
static bool spd_up;
/* Generation in ACL context names: rte_acl_create() hands back an existing
 * context of the same name, and the old snapshot's contexts live on until
 * its grace period ends. */
static uint32_t spd_gen;
/* Generation of snapshots (0 is "none"): a flow cache entry of an older
 * snapshot is never used, even if a new snapshot lands at the same address. */
static uint64_t spd_snap_gen;
/* Scratch of the control thread for the next rule list. */
static struct spd_rule spd_tmp[EGW_ESP_MAX_POLICY];

static const char *
dir_name(enum egw_esp_dir dir)
{
	return dir == EGW_ESP_DIR_OUT ? "outbound" : "inbound";
}

static void spd_err(char *err, size_t errlen, const char *fmt, ...) __rte_format_printf(3, 4);

static void
spd_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* ---- control path -------------------------------------------------- */

/* Word k of an address as the host-order number rte_acl rules hold. */
static uint32_t
addr_word(const uint8_t *a, unsigned int k)
{
	return (uint32_t)a[4 * k] << 24 | (uint32_t)a[4 * k + 1] << 16 |
	       (uint32_t)a[4 * k + 2] << 8 | a[4 * k + 3];
}

/* Prefix length falling into 32-bit word k. */
static uint32_t
word_len(unsigned int len, unsigned int k)
{
	if (len <= 32 * k)
		return 0;
	return RTE_MIN(len - 32 * k, 32u);
}

static void
spd_rule_data(struct rte_acl_rule_data *d, uint32_t pos)
{
	d->category_mask = 1;
	d->priority = (int32_t)(EGW_ESP_MAX_POLICY - pos);
	d->userdata = pos + 1;
}

static int
spd_acl_add(struct rte_acl_ctx *acl, bool v6, const struct spd_rule *r, uint32_t pos)
{
	const struct egw_esp_policy *p = &r->p;
	struct spd_acl4 r4;
	struct spd_acl6 r6;
	struct rte_acl_field *f;
	unsigned int k;

	if (!v6) {
		memset(&r4, 0, sizeof(r4));
		spd_rule_data(&r4.data, pos);
		f = r4.field;
		f[F4_SRC].value.u32 = addr_word(p->src.addr.a, 0);
		f[F4_SRC].mask_range.u32 = p->src.len;
		f[F4_DST].value.u32 = addr_word(p->dst.addr.a, 0);
		f[F4_DST].mask_range.u32 = p->dst.len;
	} else {
		memset(&r6, 0, sizeof(r6));
		spd_rule_data(&r6.data, pos);
		f = r6.field;
		for (k = 0; k < 4; k++) {
			f[F6_SRC0 + k].value.u32 = addr_word(p->src.addr.a, k);
			f[F6_SRC0 + k].mask_range.u32 = word_len(p->src.len, k);
			f[F6_DST0 + k].value.u32 = addr_word(p->dst.addr.a, k);
			f[F6_DST0 + k].mask_range.u32 = word_len(p->dst.len, k);
		}
	}
	/* F4_PROTO == F6_PROTO == 0; value 0 mask 0 = any */
	if (p->proto >= 0) {
		f[F4_PROTO].value.u8 = (uint8_t)p->proto;
		f[F4_PROTO].mask_range.u8 = UINT8_MAX;
	}
	if (!v6)
		return rte_acl_add_rules(acl, (const struct rte_acl_rule *)&r4, 1);
	return rte_acl_add_rules(acl, (const struct rte_acl_rule *)&r6, 1);
}

/* The ACL context of one family of rules[0..n), or NULL in *out if none. */
static int
spd_acl_build(enum egw_esp_dir dir, bool v6, const struct spd_rule *rules, uint32_t n,
	      struct rte_acl_ctx **out, char *err, size_t errlen)
{
	uint8_t family = v6 ? AF_INET6 : AF_INET;
	struct rte_acl_config cfg;
	struct rte_acl_param prm;
	struct rte_acl_ctx *acl;
	char name[RTE_ACL_NAMESIZE];
	uint32_t i, cnt = 0;
	int rc = 0;

	*out = NULL;
	for (i = 0; i < n; i++)
		cnt += rules[i].p.family == family;
	if (cnt == 0)
		return 0;

	snprintf(name, sizeof(name), "egw_spd_%s%d_%" PRIu32, dir == EGW_ESP_DIR_OUT ? "o" : "i",
		 v6 ? 6 : 4, ++spd_gen);
	memset(&prm, 0, sizeof(prm));
	prm.name = name;
	prm.socket_id = SOCKET_ID_ANY;
	prm.rule_size = v6 ? RTE_ACL_RULE_SZ(F6_NUM) : RTE_ACL_RULE_SZ(F4_NUM);
	prm.max_rule_num = cnt;
	acl = rte_acl_create(&prm);
	if (acl == NULL) {
		spd_err(err, errlen, "%s policies: cannot create the IPv%d classifier: %s",
			dir_name(dir), v6 ? 6 : 4, rte_strerror(rte_errno));
		return -ENOMEM;
	}
	for (i = 0; i < n && rc == 0; i++)
		if (rules[i].p.family == family)
			rc = spd_acl_add(acl, v6, &rules[i], i);
	if (rc == 0) {
		memset(&cfg, 0, sizeof(cfg));
		cfg.num_categories = 1;
		cfg.num_fields = v6 ? F6_NUM : F4_NUM;
		if (v6)
			memcpy(cfg.defs, spd_defs6, sizeof(spd_defs6));
		else
			memcpy(cfg.defs, spd_defs4, sizeof(spd_defs4));
		rc = rte_acl_build(acl, &cfg);
	}
	if (rc != 0) {
		rte_acl_free(acl);
		spd_err(err, errlen, "%s policies: cannot build the IPv%d classifier: %s",
			dir_name(dir), v6 ? 6 : 4, strerror(-rc));
		return rc == -ENOMEM ? -ENOMEM : -EINVAL;
	}
	*out = acl;
	return 0;
}

static void
spd_snap_free(struct spd_snap *s)
{
	if (s == NULL)
		return;
	rte_acl_free(s->acl[0]);
	rte_acl_free(s->acl[1]);
	rte_free(s);
}

/* What a packet matching no rule gets, with n rules (RFC 4301 5: discard;
 * the automatic default bypasses only while the direction has no rule). */
static uint8_t
spd_def_action(enum egw_esp_dir dir, uint32_t n)
{
	switch (spd[dir].def) {
	case EGW_ESP_DEFAULT_BYPASS: return EGW_ESP_BYPASS;
	case EGW_ESP_DEFAULT_DISCARD: return ESP_ACT_DEF_DISCARD;
	default: return n != 0 ? ESP_ACT_DEF_DISCARD : EGW_ESP_BYPASS;
	}
}

/* A snapshot of rules[0..n) (NULL in *out when there is no rule and the
 * default bypasses: the data path passes everything without a look). */
static int
spd_snap_build(enum egw_esp_dir dir, const struct spd_rule *rules, uint32_t n,
	       struct spd_snap **out, char *err, size_t errlen)
{
	uint8_t def = spd_def_action(dir, n);
	struct spd_snap *s;
	int rc;

	*out = NULL;
	if (n == 0 && def == EGW_ESP_BYPASS)
		return 0;
	s = rte_zmalloc("egw_esp_spd", sizeof(*s) + n * sizeof(rules[0]), RTE_CACHE_LINE_SIZE);
	if (s == NULL) {
		spd_err(err, errlen, "%s policies: out of memory for %" PRIu32 " rules",
			dir_name(dir), n);
		return -ENOMEM;
	}
	s->n = n;
	s->gen = ++spd_snap_gen;
	s->def_action = def;
	if (n != 0)
		memcpy(s->rule, rules, n * sizeof(rules[0]));
	rc = spd_acl_build(dir, false, rules, n, &s->acl[0], err, errlen);
	if (rc == 0)
		rc = spd_acl_build(dir, true, rules, n, &s->acl[1], err, errlen);
	if (rc != 0) {
		spd_snap_free(s);
		return rc;
	}
	*out = s;
	return 0;
}

/* Make s the live snapshot of dir; free the old one once no reader has it. */
static void
spd_publish(enum egw_esp_dir dir, struct spd_snap *s)
{
	struct spd_snap *old = spd[dir].snap;

	/* Pairs with the acquire load in esp_spd_lookup(): a reader that sees
	 * s sees its rules and built ACL contexts. */
	__atomic_store_n(&spd[dir].snap, s, __ATOMIC_RELEASE);
	if (old == NULL)
		return;
	if (esp_qsbr != NULL)
		rte_rcu_qsbr_synchronize(esp_qsbr, RTE_QSBR_THRID_INVALID);
	spd_snap_free(old);
}

/* Lowest hit-counter slot no rule of s holds. */
static uint16_t
spd_free_slot(const struct spd_snap *s)
{
	uint64_t used[EGW_ESP_MAX_POLICY / 64];
	unsigned int i;

	memset(used, 0, sizeof(used));
	for (i = 0; s != NULL && i < s->n; i++)
		used[s->rule[i].slot / 64] |= UINT64_C(1) << (s->rule[i].slot % 64);
	for (i = 0; i < RTE_DIM(used); i++)
		if (used[i] != UINT64_MAX)
			return (uint16_t)(i * 64 + __builtin_ctzll(~used[i]));
	return 0; /* not reached: callers check the rule count first */
}

static const char *
prefix_str(const struct egw_esp_prefix *pf, uint8_t family, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];

	if (inet_ntop(family, pf->addr.a, a, sizeof(a)) == NULL)
		snprintf(a, sizeof(a), "?");
	snprintf(buf, len, "%s/%u", a, pf->len);
	return buf;
}

/*
 * Check a prefix of a policy of family: its own family must be the policy's
 * (or unset with length 0, meaning any address), its length must fit, and no
 * bit beyond the length may be set - a typo there is refused, not masked.
 */
static int
spd_check_prefix(const struct egw_esp_prefix *pf, uint8_t family, const char *which, char *err,
		 size_t errlen)
{
	unsigned int bits = family == AF_INET ? 32 : 128;
	unsigned int b, len = pf->len;
	char buf[INET6_ADDRSTRLEN + 8];

	if (pf->addr.family != family && !(pf->addr.family == 0 && len == 0)) {
		spd_err(err, errlen, "policy %s prefix is not %s like the policy", which,
			family == AF_INET ? "IPv4" : "IPv6");
		return -EINVAL;
	}
	if (len > bits) {
		spd_err(err, errlen, "policy %s prefix length %u is longer than %u", which, len,
			bits);
		return -EINVAL;
	}
	for (b = 0; b < bits / 8; b++) {
		unsigned int keep = len >= 8 * (b + 1) ? 8 : len > 8 * b ? len - 8 * b : 0;
		uint8_t mask = (uint8_t)(0xff00 >> keep);

		if ((pf->addr.a[b] & ~mask) != 0) {
			spd_err(err, errlen,
				"policy %s prefix %s has bits set beyond its length (host bits)",
				which, prefix_str(pf, family, buf, sizeof(buf)));
			return -EINVAL;
		}
	}
	return 0;
}

/* A copy of p as stored: unset prefix families filled in, unused bytes zero. */
static void
spd_normalise(struct egw_esp_policy *p)
{
	if (p->family == AF_INET) {
		memset(&p->src.addr.a[4], 0, sizeof(p->src.addr.a) - 4);
		memset(&p->dst.addr.a[4], 0, sizeof(p->dst.addr.a) - 4);
	}
	p->src.addr.family = p->family;
	p->dst.addr.family = p->family;
	if (p->action != EGW_ESP_PROTECT)
		p->spi = 0;
}

int
egw_esp_policy_add(const struct egw_esp_policy *p, int pos, char *err, size_t errlen)
{
	struct egw_esp_sa *sa = NULL;
	const struct spd_snap *cur;
	struct spd_snap *snap;
	struct spd_rule *r;
	uint32_t n, at;
	int rc;

	spd_err(err, errlen, "%s", "");
	if (p == NULL) {
		spd_err(err, errlen, "policy missing");
		return -EINVAL;
	}
	if (!spd_up) {
		spd_err(err, errlen, "policy: the ESP library is not initialised");
		return -EINVAL;
	}
	if (p->dir != EGW_ESP_DIR_OUT && p->dir != EGW_ESP_DIR_IN) {
		spd_err(err, errlen, "policy direction %d is neither out nor in", (int)p->dir);
		return -EINVAL;
	}
	if (p->family != AF_INET && p->family != AF_INET6) {
		spd_err(err, errlen, "policy family %u is neither IPv4 nor IPv6", p->family);
		return -EINVAL;
	}
	rc = spd_check_prefix(&p->src, p->family, "source", err, errlen);
	if (rc == 0)
		rc = spd_check_prefix(&p->dst, p->family, "destination", err, errlen);
	if (rc != 0)
		return rc;
	if (p->proto < -1 || p->proto >= SPD_PROTO_UNKNOWN) {
		spd_err(err, errlen,
			"policy protocol %d is out of range (0-254, or any; 255 is reserved)",
			p->proto);
		return -EINVAL;
	}
	if (p->action != EGW_ESP_BYPASS && p->action != EGW_ESP_DISCARD &&
	    p->action != EGW_ESP_PROTECT) {
		spd_err(err, errlen, "policy action %d is not bypass, discard or protect",
			(int)p->action);
		return -EINVAL;
	}
	if (p->action == EGW_ESP_PROTECT) {
		/* A transport-mode SA carries packets of the policy's family by
		 * construction and a tunnel carries either family, so there is
		 * no mode/family mismatch to refuse. */
		sa = esp_sa_find(p->spi, p->dir);
		if (sa == NULL) {
			spd_err(err, errlen, "policy protects with no %s SA with SPI 0x%08" PRIx32,
				dir_name(p->dir), p->spi);
			return -ENOENT;
		}
	}
	if (pos < -1) {
		spd_err(err, errlen, "policy position %d is not valid (0 = first, -1 = last)", pos);
		return -EINVAL;
	}

	cur = spd[p->dir].snap;
	n = cur != NULL ? cur->n : 0;
	if (n >= EGW_ESP_MAX_POLICY) {
		spd_err(err, errlen, "%s policies: the list is full (%d rules)", dir_name(p->dir),
			EGW_ESP_MAX_POLICY);
		return -ENOSPC;
	}
	if (spd[p->dir].next_id > INT_MAX) {
		spd_err(err, errlen, "%s policies: rule ids are used up", dir_name(p->dir));
		return -ENOSPC;
	}
	at = pos < 0 || (uint32_t)pos > n ? n : (uint32_t)pos;

	if (at > 0)
		memcpy(spd_tmp, cur->rule, at * sizeof(spd_tmp[0]));
	if (n > at)
		memcpy(&spd_tmp[at + 1], &cur->rule[at], (n - at) * sizeof(spd_tmp[0]));
	r = &spd_tmp[at];
	memset(r, 0, sizeof(*r));
	r->p = *p;
	spd_normalise(&r->p);
	r->p.id = spd[p->dir].next_id;
	r->sa = sa;
	r->slot = spd_free_slot(cur);
	r->hits_base = esp_ctx_sum_policy_hits(p->dir, r->slot);

	rc = spd_snap_build(p->dir, spd_tmp, n + 1, &snap, err, errlen);
	if (rc != 0)
		return rc;
	spd_publish(p->dir, snap);
	spd[p->dir].next_id++;
	if (sa != NULL)
		sa->policy_refs++;
	ESP_LOG(DEBUG, "%s policy %" PRIu32 " added at %" PRIu32, dir_name(p->dir), r->p.id, at);
	return (int)r->p.id;
}

int
egw_esp_policy_del(enum egw_esp_dir dir, uint32_t id)
{
	const struct spd_snap *cur;
	struct egw_esp_sa *sa, *cur_prev;
	struct spd_snap *snap;
	uint32_t i, n;
	int rc;

	if (!spd_up || (dir != EGW_ESP_DIR_OUT && dir != EGW_ESP_DIR_IN))
		return -ENOENT;
	cur = spd[dir].snap;
	n = cur != NULL ? cur->n : 0;
	for (i = 0; i < n; i++)
		if (cur->rule[i].p.id == id)
			break;
	if (i == n)
		return -ENOENT;
	sa = cur->rule[i].sa;
	cur_prev = cur->rule[i].sa_prev;
	memcpy(spd_tmp, cur->rule, i * sizeof(spd_tmp[0]));
	memcpy(&spd_tmp[i], &cur->rule[i + 1], (n - i - 1) * sizeof(spd_tmp[0]));
	rc = spd_snap_build(dir, spd_tmp, n - 1, &snap, NULL, 0);
	if (rc != 0) {
		ESP_LOG(ERR, "%s policy %" PRIu32 " not deleted: %s", dir_name(dir), id,
			strerror(-rc));
		return rc;
	}
	spd_publish(dir, snap);
	/* after the grace period: no reader holds the SA through this rule */
	if (sa != NULL)
		sa->policy_refs--;
	if (cur_prev != NULL)
		cur_prev->policy_refs--;
	ESP_LOG(DEBUG, "%s policy %" PRIu32 " deleted", dir_name(dir), id);
	return 0;
}

struct spd_walk_item {
	struct egw_esp_policy p;
	uint64_t hits;
};

int
egw_esp_policy_walk(enum egw_esp_dir dir,
		    int (*fn)(const struct egw_esp_policy *p, uint64_t hits, void *arg), void *arg)
{
	const struct spd_snap *s;
	struct spd_walk_item *w;
	uint32_t i, n;
	int rc = 0;

	if (fn == NULL || (dir != EGW_ESP_DIR_OUT && dir != EGW_ESP_DIR_IN))
		return -EINVAL;
	s = spd_up ? spd[dir].snap : NULL;
	if (s == NULL)
		return 0;
	/* fn may add or delete policies, which frees s: walk a copy */
	n = s->n;
	w = malloc(n * sizeof(*w));
	if (w == NULL)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const struct spd_rule *r = &s->rule[i];
		uint64_t sum = esp_ctx_sum_policy_hits(dir, r->slot);

		w[i].p = r->p;
		/* a freed context takes its counts with it: never below 0 */
		w[i].hits = sum > r->hits_base ? sum - r->hits_base : 0;
	}
	for (i = 0; i < n && rc == 0; i++)
		rc = fn(&w[i].p, w[i].hits, arg);
	free(w);
	return rc;
}

/* Rebuild dir's snapshot from its current rules (after a default change,
 * an SA replacement or a predecessor dropped). */
static int
spd_rebuild(enum egw_esp_dir dir, uint32_t n, char *err, size_t errlen)
{
	struct spd_snap *snap;
	int rc;

	rc = spd_snap_build(dir, spd_tmp, n, &snap, err, errlen);
	if (rc != 0)
		return rc;
	spd_publish(dir, snap);
	return 0;
}

int
egw_esp_policy_default(enum egw_esp_dir dir, enum egw_esp_policy_default def, char *err,
		       size_t errlen)
{
	const struct spd_snap *cur;
	enum egw_esp_policy_default old;
	uint32_t n;
	int rc;

	spd_err(err, errlen, "%s", "");
	if (!spd_up || (dir != EGW_ESP_DIR_OUT && dir != EGW_ESP_DIR_IN) ||
	    (def != EGW_ESP_DEFAULT_AUTO && def != EGW_ESP_DEFAULT_BYPASS &&
	     def != EGW_ESP_DEFAULT_DISCARD)) {
		spd_err(err, errlen, "policy default: bad direction or action");
		return -EINVAL;
	}
	cur = spd[dir].snap;
	n = cur != NULL ? cur->n : 0;
	if (n != 0)
		memcpy(spd_tmp, cur->rule, n * sizeof(spd_tmp[0]));
	old = spd[dir].def;
	spd[dir].def = def;
	rc = spd_rebuild(dir, n, err, errlen);
	if (rc != 0)
		spd[dir].def = old;
	return rc;
}

enum egw_esp_policy_default
egw_esp_policy_default_get(enum egw_esp_dir dir)
{
	return spd_up && (dir == EGW_ESP_DIR_OUT || dir == EGW_ESP_DIR_IN) ? spd[dir].def
									   : EGW_ESP_DEFAULT_AUTO;
}

bool
egw_esp_policy_active(enum egw_esp_dir dir)
{
	return spd_up && (dir == EGW_ESP_DIR_OUT || dir == EGW_ESP_DIR_IN) &&
	       __atomic_load_n(&spd[dir].snap, __ATOMIC_RELAXED) != NULL;
}

int
esp_spd_replace_sa(enum egw_esp_dir dir, struct egw_esp_sa *old, struct egw_esp_sa *nsa, char *err,
		   size_t errlen)
{
	struct egw_esp_sa *gone[EGW_ESP_MAX_POLICY]; /* predecessors that leave */
	const struct spd_snap *cur;
	uint32_t i, n, moved = 0, ng = 0;
	int rc;

	cur = spd_up ? spd[dir].snap : NULL;
	n = cur != NULL ? cur->n : 0;
	for (i = 0; i < n; i++) {
		struct spd_rule *r = &spd_tmp[i];

		*r = cur->rule[i];
		if (r->sa != old)
			continue;
		/* inbound: old stays accepted as the predecessor; the one before
		 * it (a rekey before the last delete) goes */
		if (dir == EGW_ESP_DIR_IN) {
			if (r->sa_prev != NULL)
				gone[ng++] = r->sa_prev;
			r->sa_prev = old;
		}
		r->sa = nsa;
		r->p.spi = nsa->spi;
		moved++;
	}
	if (moved == 0) {
		spd_err(err, errlen, "no %s policy protects with SA 0x%08" PRIx32, dir_name(dir),
			old->spi);
		return -ENOENT;
	}
	rc = spd_rebuild(dir, n, err, errlen);
	if (rc != 0)
		return rc;
	/* after the grace period: readers see the new SA; inbound, old keeps
	 * its references as the predecessor */
	nsa->policy_refs += moved;
	if (dir == EGW_ESP_DIR_OUT)
		old->policy_refs -= moved;
	for (i = 0; i < ng; i++)
		gone[i]->policy_refs--;
	return (int)moved;
}

int
esp_spd_forget_prev(enum egw_esp_dir dir, struct egw_esp_sa *sa)
{
	const struct spd_snap *cur;
	uint32_t i, n, dropped = 0;
	int rc;

	cur = spd_up ? spd[dir].snap : NULL;
	n = cur != NULL ? cur->n : 0;
	for (i = 0; i < n; i++) {
		spd_tmp[i] = cur->rule[i];
		if (spd_tmp[i].sa_prev == sa) {
			spd_tmp[i].sa_prev = NULL;
			dropped++;
		}
	}
	if (dropped == 0)
		return 0;
	rc = spd_rebuild(dir, n, NULL, 0);
	if (rc != 0)
		return rc;
	sa->policy_refs -= dropped;
	return (int)dropped;
}

/* Rules that name sa as the protecting SA (not as predecessor). */
uint32_t
esp_spd_protect_refs(enum egw_esp_dir dir, const struct egw_esp_sa *sa)
{
	const struct spd_snap *s = spd_up ? spd[dir].snap : NULL;
	uint32_t i, k = 0;

	for (i = 0; s != NULL && i < s->n; i++)
		k += s->rule[i].sa == sa;
	return k;
}

bool
esp_spd_refs_sa(enum egw_esp_dir dir, uint32_t spi)
{
	const struct spd_snap *s;
	uint32_t i;

	if (!spd_up || (dir != EGW_ESP_DIR_OUT && dir != EGW_ESP_DIR_IN))
		return false;
	s = spd[dir].snap;
	for (i = 0; s != NULL && i < s->n; i++)
		if (s->rule[i].p.action == EGW_ESP_PROTECT && s->rule[i].p.spi == spi)
			return true;
	return false;
}

int
esp_spd_init(void)
{
	unsigned int d;

	if (spd_up)
		return -EALREADY;
	for (d = 0; d < RTE_DIM(spd); d++) {
		spd[d].snap = NULL;
		spd[d].next_id = 1;
		spd[d].def = EGW_ESP_DEFAULT_AUTO;
	}
	spd_up = true;
	return 0;
}

void
esp_spd_fini(void)
{
	unsigned int d, i;

	if (!spd_up)
		return;
	for (d = 0; d < RTE_DIM(spd); d++) {
		const struct spd_snap *s = spd[d].snap;

		/* The rules' references go through the SA table, not the stored
		 * pointers: the SAs may already be gone when the library shuts
		 * down. */
		for (i = 0; s != NULL && i < s->n; i++) {
			struct egw_esp_sa *sa;

			if (s->rule[i].sa == NULL)
				continue;
			sa = esp_sa_find(s->rule[i].p.spi, (enum egw_esp_dir)d);
			if (sa != NULL && sa->policy_refs > 0)
				sa->policy_refs--;
			/* a predecessor is live as long as it holds this reference */
			if (s->rule[i].sa_prev != NULL && s->rule[i].sa_prev->policy_refs > 0)
				s->rule[i].sa_prev->policy_refs--;
		}
		spd_publish((enum egw_esp_dir)d, NULL);
		spd[d].def = EGW_ESP_DEFAULT_AUTO;
	}
	spd_up = false;
}

/* ---- data path ----------------------------------------------------- */

static inline bool
ip6_ext_skipped(uint8_t nh)
{
	return nh == IPPROTO_HOPOPTS || nh == IPPROTO_ROUTING || nh == IPPROTO_DSTOPTS ||
	       nh == IPPROTO_FRAGMENT;
}

/*
 * Upper-layer protocol of the IPv6 packet whose extension headers (if any)
 * start at off with next header nh and end before end: hop-by-hop, routing,
 * destination options and fragment headers are skipped. Every header must
 * lie within the packet; SPD_PROTO_UNKNOWN when the chain cannot be read.
 */
static uint8_t
ip6_upper_proto(const struct rte_mbuf *m, uint32_t off, uint32_t end, uint8_t nh)
{
	const struct rte_ipv6_fragment_ext *fh;
	struct rte_ipv6_fragment_ext fbuf;
	const uint8_t *h;
	uint8_t hbuf[2];
	unsigned int i;

	for (i = 0; i < SPD_IP6_EXT_MAX && ip6_ext_skipped(nh); i++) {
		if (nh == IPPROTO_FRAGMENT) {
			if (end - off < sizeof(*fh))
				return SPD_PROTO_UNKNOWN;
			fh = rte_pktmbuf_read(m, off, sizeof(*fh), &fbuf);
			if (fh == NULL)
				return SPD_PROTO_UNKNOWN;
			nh = fh->next_header;
			off += sizeof(*fh);
			/* a later fragment carries no headers past this one */
			if (RTE_IPV6_GET_FO(rte_be_to_cpu_16(fh->frag_data)) != 0)
				return ip6_ext_skipped(nh) ? SPD_PROTO_UNKNOWN : nh;
			continue;
		}
		if (end - off < 8)
			return SPD_PROTO_UNKNOWN;
		h = rte_pktmbuf_read(m, off, sizeof(hbuf), hbuf);
		if (h == NULL)
			return SPD_PROTO_UNKNOWN;
		/* RFC 8200 4.3-4.6: length in 8-byte units beyond the first 8 */
		if (end - off < ((uint32_t)h[1] + 1) * 8)
			return SPD_PROTO_UNKNOWN;
		nh = h[0];
		off += ((uint32_t)h[1] + 1) * 8;
	}
	return ip6_ext_skipped(nh) ? SPD_PROTO_UNKNOWN : nh;
}

/*
 * Fill the key of frame m. The ethertype (the last two bytes of the L2
 * header) names the family and the IP version nibble must agree; without an
 * L2 header (l2_len < 2) the nibble alone decides. Returns 4 or 6, or 0 for
 * a frame that is not IP, is too short for its fixed IP header, or whose
 * version is not its ethertype's (ESP_ACT_NOT_IP: dropped, never passed).
 * rte_pktmbuf_read() bounds every read by the packet and copies headers
 * that straddle segments.
 */
static inline int
spd_parse(const struct rte_mbuf *m, struct spd_key4 *k4, struct spd_key6 *k6)
{
	union {
		struct rte_ipv4_hdr v4;
		struct rte_ipv6_hdr v6;
	} buf;
	const struct rte_ipv4_hdr *ip4;
	const struct rte_ipv6_hdr *ip6;
	const uint8_t *vp;
	uint32_t off = m->l2_len, end, plen;
	unsigned int want = 0;

	/* the common case in one bound check: IPv4 under an IPv4 ethertype,
	 * the header in the first segment */
	if (likely(off >= 2 && rte_pktmbuf_data_len(m) >= off + sizeof(*ip4))) {
		const uint8_t *h = rte_pktmbuf_mtod(m, const uint8_t *) + off;

		if ((h[-2] << 8 | h[-1]) == RTE_ETHER_TYPE_IPV4 && (h[0] >> 4) == 4) {
			ip4 = (const struct rte_ipv4_hdr *)h;
			k4->proto = ip4->next_proto_id;
			memcpy(k4->src, &ip4->src_addr, sizeof(k4->src) + sizeof(k4->dst));
			return 4;
		}
	}
	if (off >= 2) {
		const uint8_t *et = rte_pktmbuf_read(m, off - 2, 2, &buf);

		if (et == NULL)
			return 0;
		switch (et[0] << 8 | et[1]) {
		case RTE_ETHER_TYPE_IPV4: want = 4; break;
		case RTE_ETHER_TYPE_IPV6: want = 6; break;
		default: return 0;
		}
	}
	vp = rte_pktmbuf_read(m, off, 1, &buf);
	if (vp == NULL || (want != 0 && (unsigned int)(*vp >> 4) != want))
		return 0;
	switch (*vp >> 4) {
	case 4:
		ip4 = rte_pktmbuf_read(m, off, sizeof(*ip4), &buf);
		if (ip4 == NULL)
			return 0;
		k4->proto = ip4->next_proto_id;
		/* both addresses in one store: the flow compares load them as
		 * one word, which two narrower stores could not forward */
		static_assert(offsetof(struct rte_ipv4_hdr, dst_addr) ==
					      offsetof(struct rte_ipv4_hdr, src_addr) + 4 &&
				      offsetof(struct spd_key4, dst) ==
					      offsetof(struct spd_key4, src) + 4,
			      "IPv4 addresses adjacent");
		memcpy(k4->src, &ip4->src_addr, sizeof(k4->src) + sizeof(k4->dst));
		return 4;
	case 6:
		ip6 = rte_pktmbuf_read(m, off, sizeof(*ip6), &buf);
		if (ip6 == NULL)
			return 0;
		static_assert(offsetof(struct rte_ipv6_hdr, dst_addr) ==
					      offsetof(struct rte_ipv6_hdr, src_addr) + 16 &&
				      offsetof(struct spd_key6, dst) ==
					      offsetof(struct spd_key6, src) + 16,
			      "IPv6 addresses adjacent");
		memcpy(k6->src, ip6->src_addr, sizeof(k6->src) + sizeof(k6->dst));
		/* headers end where the payload length says, or with the
		 * frame if it says more (or 0: a jumbogram) */
		end = rte_pktmbuf_pkt_len(m);
		plen = rte_be_to_cpu_16(ip6->payload_len);
		if (plen != 0 && off + sizeof(*ip6) + plen < end)
			end = off + sizeof(*ip6) + plen;
		k6->proto = ip6_upper_proto(m, off + sizeof(*ip6), end, ip6->proto);
		return 6;
	default: return 0;
	}
}

/*
 * The action of a packet whose key had protocol proto and matched rule r
 * (NULL: none). A packet whose protocol could not be read may match only a
 * rule that discards: a proto-any bypass or protect rule must not carry
 * what a protocol rule before it might have discarded or protected.
 */
static inline uint8_t
spd_action(const struct spd_snap *s, const struct spd_rule *r, uint8_t proto)
{
	if (unlikely(proto == SPD_PROTO_UNKNOWN))
		return r != NULL && r->p.action == EGW_ESP_DISCARD ? EGW_ESP_DISCARD
								   : ESP_ACT_PROTO_UNKNOWN;
	return r != NULL ? (uint8_t)r->p.action : s->def_action;
}

/* Results of one family back to the packets' slots. */
static inline void
spd_apply(struct egw_esp_ctx *c, enum egw_esp_dir dir, const struct spd_snap *s, unsigned int fam,
	  const uint8_t *data[], uint16_t idx[], uint16_t cnt, uint8_t action[],
	  struct egw_esp_sa *sa[], struct egw_esp_sa *prev[], const struct spd_rule *rule[])
{
	uint32_t res[EGW_ESP_MAX_BURST];
	uint16_t j;

	if (cnt == 0)
		return;
	if (s->acl[fam] != NULL)
		rte_acl_classify(s->acl[fam], data, res, cnt, 1);
	else
		memset(res, 0, cnt * sizeof(res[0]));
	for (j = 0; j < cnt; j++) {
		const struct spd_rule *r = res[j] == 0 ? NULL : &s->rule[res[j] - 1];
		uint8_t a = spd_action(s, r, data[j][0]);

		action[idx[j]] = a;
		if (r == NULL)
			continue;
		if (a == EGW_ESP_PROTECT) {
			sa[idx[j]] = r->sa;
			if (prev != NULL)
				prev[idx[j]] = r->sa_prev;
		}
		rule[idx[j]] = r;
		c->policy_hits[dir][r->slot]++;
	}
}

/* Same protocol and addresses (the padding is not written by spd_parse). */
static inline bool
key4_eq(const struct spd_key4 *a, const struct spd_key4 *b)
{
	return a->proto == b->proto && memcmp(a->src, b->src, sizeof(a->src) + sizeof(a->dst)) == 0;
}

static inline bool
key6_eq(const struct spd_key6 *a, const struct spd_key6 *b)
{
	return a->proto == b->proto && memcmp(a->src, b->src, sizeof(a->src) + sizeof(a->dst)) == 0;
}

static inline bool
cache6_hit(const struct esp_spd_cache *e, const struct spd_snap *s, const struct spd_key6 *k)
{
	return e->gen == s->gen && key6_eq(k, (const struct spd_key6 *)e->key);
}

/* The IPv4 cache entry of flow {proto, addr} (addr: the source and
 * destination as the header holds them): a multiplicative hash, whose top
 * bits mix the input's bits. A sender who makes its flows collide only
 * makes them miss. */
static inline struct esp_spd_cache4 *
cache4_slot(struct egw_esp_ctx *c, enum egw_esp_dir dir, uint8_t proto, uint64_t addr)
{
	uint64_t x = (addr ^ proto) * UINT64_C(0x9e3779b97f4a7c15);

	return &c->spd_cache4[dir][x >> (64 - ESP_SPD_CACHE4_BITS)];
}

/* Remember the result of the IPv4 key k (r: the rule that matched, or
 * NULL). */
static inline void
cache4_fill(struct egw_esp_ctx *c, enum egw_esp_dir dir, const struct spd_snap *s,
	    const struct spd_key4 *k, uint8_t action, struct egw_esp_sa *sa,
	    struct egw_esp_sa *prev, const struct spd_rule *r)
{
	struct esp_spd_cache4 *e;
	uint64_t addr;

	static_assert(sizeof(addr) == sizeof(k->src) + sizeof(k->dst), "IPv4 key addresses");
	memcpy(&addr, k->src, sizeof(addr));
	e = cache4_slot(c, dir, k->proto, addr);
	e->gen = s->gen;
	e->addr = addr;
	e->proto = k->proto;
	e->action = action;
	e->sa = sa;
	e->prev = prev;
	e->hits = r != NULL ? &c->policy_hits[dir][r->slot] : &c->spd_no_rule;
}

/* Frame i takes the result in the IPv6 cache entry e. */
static inline void
take_cache(const struct esp_spd_cache *e, uint16_t i, uint8_t action[], struct egw_esp_sa *sa[],
	   struct egw_esp_sa *prev[])
{
	action[i] = e->action;
	sa[i] = e->sa;
	if (prev != NULL)
		prev[i] = e->prev;
}

/* Remember the result of the IPv6 key k, the only IPv6 entry. */
static inline void
cache6_fill(struct esp_spd_cache *e, const struct spd_snap *s, const struct spd_key6 *k,
	    uint8_t action, struct egw_esp_sa *sa, struct egw_esp_sa *prev,
	    const struct spd_rule *r)
{
	e->gen = s->gen;
	memcpy(e->key, k, sizeof(*k));
	e->action = action;
	e->sa = sa;
	e->prev = prev;
	e->slot = r != NULL ? r->slot : -1;
}

/*
 * The IPv4 flow key of frame m, read as spd_parse()'s common case reads it
 * (IPv4 under an IPv4 ethertype, the header in the first segment); false
 * for any other frame, which the cache does not answer.
 */
static inline bool
flow4_key(const struct rte_mbuf *m, uint64_t *addr, uint8_t *proto)
{
	uint32_t off = m->l2_len;
	const uint8_t *h;
	uint16_t et;

	if (unlikely(off < 2 || rte_pktmbuf_data_len(m) < off + sizeof(struct rte_ipv4_hdr)))
		return false;
	h = rte_pktmbuf_mtod(m, const uint8_t *) + off;
	memcpy(&et, h - 2, sizeof(et));
	if (et != RTE_BE16(RTE_ETHER_TYPE_IPV4) || (h[0] & 0xf0) != 0x40)
		return false;
	*proto = h[offsetof(struct rte_ipv4_hdr, next_proto_id)];
	memcpy(addr, h + offsetof(struct rte_ipv4_hdr, src_addr), sizeof(*addr));
	return true;
}

/*
 * The IPv4 cache of one direction as a loop over a burst asks it: the
 * entry of the previous frame's flow is kept with its key, so a run of one
 * flow costs a compare a frame, and its hits are added once a run.
 */
struct cache4_walk {
	struct egw_esp_ctx *c;
	enum egw_esp_dir dir;
	uint64_t gen;  /* the snapshot's */
	uint64_t addr; /* key of last */
	const struct esp_spd_cache4 *last;
	uint32_t run; /* frames last answered since its hits were added */
	uint8_t proto;
};

static inline void
cache4_walk_init(struct cache4_walk *w, struct egw_esp_ctx *c, enum egw_esp_dir dir,
		 const struct spd_snap *s)
{
	w->c = c;
	w->dir = dir;
	w->gen = s->gen;
	w->addr = 0;
	w->last = NULL;
	w->run = 0;
	w->proto = 0;
}

/* Add the run's hits to its rule; due before an entry may be refilled. */
static inline void
cache4_walk_flush(struct cache4_walk *w)
{
	if (w->run != 0)
		*w->last->hits += w->run;
	w->run = 0;
}

/* The IPv4 cache entry that holds frame m's result under the snapshot, or
 * NULL. */
static inline const struct esp_spd_cache4 *
cache4_find(struct cache4_walk *w, const struct rte_mbuf *m)
{
	const struct esp_spd_cache4 *e;
	uint64_t addr;
	uint8_t proto;

	if (!flow4_key(m, &addr, &proto))
		return NULL;
	if (w->last != NULL && addr == w->addr && proto == w->proto) {
		w->run++;
		return w->last;
	}
	e = cache4_slot(w->c, w->dir, proto, addr);
	if (e->gen != w->gen || e->addr != addr || e->proto != proto)
		return NULL;
	cache4_walk_flush(w);
	w->last = e;
	w->addr = addr;
	w->proto = proto;
	w->run = 1;
	return e;
}

/*
 * Classification of at most EGW_ESP_MAX_BURST frames that missed the IPv4
 * cache. A frame with the same key (protocol and addresses) as the previous
 * frame of its family takes that frame's result; an IPv6 frame with the key
 * of the last IPv6 flow this context classified (while the snapshot is the
 * same) takes the cached result. The rest go to rte_acl, and every IPv4
 * flow classified here is cached for the next bursts.
 */
static void
spd_lookup_burst(struct egw_esp_ctx *c, enum egw_esp_dir dir, const struct spd_snap *s,
		 struct rte_mbuf *pkts[], uint16_t n, uint8_t action[], struct egw_esp_sa *sa[],
		 struct egw_esp_sa *prev[])
{
	struct spd_key4 k4[EGW_ESP_MAX_BURST + 1];
	struct spd_key6 k6[EGW_ESP_MAX_BURST + 1];
	const uint8_t *d4[EGW_ESP_MAX_BURST];
	const uint8_t *d6[EGW_ESP_MAX_BURST];
	const struct spd_rule *rule[EGW_ESP_MAX_BURST];
	uint16_t i4[EGW_ESP_MAX_BURST];
	uint16_t i6[EGW_ESP_MAX_BURST];
	uint16_t same[EGW_ESP_MAX_BURST]; /* index of the frame whose result to take, or i */
	struct esp_spd_cache *c6 = &c->spd_cache6[dir];
	uint16_t i, j, n4 = 0, n6 = 0, ndup = 0, hit6 = 0;

	for (i = 0; i < n; i++) {
		if (i + SPD_PREFETCH_AHEAD < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + SPD_PREFETCH_AHEAD], void *));
		action[i] = ESP_ACT_NOT_IP;
		sa[i] = NULL;
		if (prev != NULL)
			prev[i] = NULL;
		rule[i] = NULL;
		same[i] = i;
		switch (spd_parse(pkts[i], &k4[n4], &k6[n6])) {
		case 4:
			if (n4 != 0 && key4_eq(&k4[n4], &k4[n4 - 1])) {
				same[i] = i4[n4 - 1];
				ndup++;
				break;
			}
			d4[n4] = (const uint8_t *)&k4[n4];
			i4[n4++] = i;
			break;
		case 6:
			if (n6 != 0 && key6_eq(&k6[n6], &k6[n6 - 1])) {
				same[i] = i6[n6 - 1];
				ndup++;
				break;
			}
			if (n6 == 0 && cache6_hit(c6, s, &k6[0])) {
				take_cache(c6, i, action, sa, prev);
				hit6++;
				break;
			}
			d6[n6] = (const uint8_t *)&k6[n6];
			i6[n6++] = i;
			break;
		default: break;
		}
	}
	/* the cache's hits are counted once for the burst, before the
	 * entry may change below */
	if (hit6 != 0 && c6->slot >= 0)
		c->policy_hits[dir][c6->slot] += hit6;
	spd_apply(c, dir, s, 0, d4, i4, n4, action, sa, prev, rule);
	spd_apply(c, dir, s, 1, d6, i6, n6, action, sa, prev, rule);
	for (i = 0; ndup != 0 && i < n; i++) {
		uint16_t r = same[i];

		if (r == i)
			continue;
		ndup--;
		action[i] = action[r];
		sa[i] = sa[r];
		if (prev != NULL)
			prev[i] = prev[r];
		if (rule[r] != NULL)
			c->policy_hits[dir][rule[r]->slot]++;
	}
	/* each IPv4 flow classified, and the last IPv6 one, are the next
	 * bursts' guesses (the predecessor from the rule: this call may not
	 * have asked) */
	for (j = 0; j < n4; j++) {
		i = i4[j];
		cache4_fill(c, dir, s, &k4[j], action[i], sa[i],
			    action[i] == EGW_ESP_PROTECT ? rule[i]->sa_prev : NULL, rule[i]);
	}
	if (n6 != 0) {
		i = i6[n6 - 1];
		cache6_fill(c6, s, &k6[n6 - 1], action[i], sa[i],
			    action[i] == EGW_ESP_PROTECT ? rule[i]->sa_prev : NULL, rule[i]);
	}
}

/*
 * spd_lookup_burst() with the IPv4 flow cache asked for every frame first:
 * a frame whose flow is cached under this snapshot takes the entry's result
 * for a hash and a compare; only the others are parsed and classified. A
 * steady set of flows then costs no rte_acl, no parse and none of the
 * burst's bookkeeping.
 */
static void
spd_lookup_cached(struct egw_esp_ctx *c, enum egw_esp_dir dir, const struct spd_snap *s,
		  struct rte_mbuf *pkts[], uint16_t n, uint8_t action[], struct egw_esp_sa *sa[],
		  struct egw_esp_sa *prev[])
{
	struct rte_mbuf *miss[EGW_ESP_MAX_BURST];
	struct egw_esp_sa *msa[EGW_ESP_MAX_BURST], *mprev[EGW_ESP_MAX_BURST];
	uint8_t mact[EGW_ESP_MAX_BURST];
	uint16_t idx[EGW_ESP_MAX_BURST];
	struct cache4_walk w;
	uint16_t i, nm = 0;

	cache4_walk_init(&w, c, dir, s);
	for (i = 0; i < n; i++) {
		const struct esp_spd_cache4 *e = cache4_find(&w, pkts[i]);

		if (e == NULL) {
			idx[nm] = i;
			miss[nm++] = pkts[i];
			continue;
		}
		action[i] = e->action;
		sa[i] = e->sa;
		if (prev != NULL)
			prev[i] = e->prev;
	}
	cache4_walk_flush(&w);
	if (nm == 0)
		return;
	spd_lookup_burst(c, dir, s, miss, nm, mact, msa, prev != NULL ? mprev : NULL);
	for (i = 0; i < nm; i++) {
		action[idx[i]] = mact[i];
		sa[idx[i]] = msa[i];
		if (prev != NULL)
			prev[idx[i]] = mprev[i];
	}
}

void
esp_spd_lookup(struct egw_esp_ctx *c, enum egw_esp_dir dir, struct rte_mbuf *pkts[], uint16_t n,
	       uint8_t action[], struct egw_esp_sa *sa[], struct egw_esp_sa *prev[])
{
	const struct spd_snap *s;
	uint16_t done, k, i;

	/* Pairs with the release store in spd_publish(); s stays valid until
	 * this thread's next quiescent report. */
	s = __atomic_load_n(&spd[dir].snap, __ATOMIC_ACQUIRE);
	if (s == NULL) {
		for (i = 0; i < n; i++) {
			action[i] = EGW_ESP_BYPASS;
			sa[i] = NULL;
			if (prev != NULL)
				prev[i] = NULL;
		}
		return;
	}
	for (done = 0; done < n; done += k) {
		k = RTE_MIN(n - done, EGW_ESP_MAX_BURST);
		spd_lookup_cached(c, dir, s, pkts + done, k, action + done, sa + done,
				  prev != NULL ? prev + done : NULL);
	}
}

void
esp_spd_check_in(struct egw_esp_ctx *c, struct rte_mbuf *pkts[], uint16_t n,
		 struct egw_esp_sa *const via[], uint8_t ok[])
{
	struct rte_mbuf *miss[EGW_ESP_MAX_BURST];
	struct egw_esp_sa *sa[EGW_ESP_MAX_BURST], *prev[EGW_ESP_MAX_BURST];
	uint8_t act[EGW_ESP_MAX_BURST];
	uint16_t idx[EGW_ESP_MAX_BURST];
	const struct spd_snap *s;
	uint16_t done, k, i, nm;

	/* Pairs with the release store in spd_publish(), as in
	 * esp_spd_lookup(); an entry of an older snapshot is not used. */
	s = __atomic_load_n(&spd[EGW_ESP_DIR_IN].snap, __ATOMIC_ACQUIRE);
	if (s == NULL) {
		/* no inbound policy: no rule names the SA any frame came
		 * through */
		memset(ok, 0, n * sizeof(ok[0]));
		return;
	}
	for (done = 0; done < n; done += k) {
		struct cache4_walk w;

		k = RTE_MIN(n - done, EGW_ESP_MAX_BURST);
		nm = 0;
		cache4_walk_init(&w, c, EGW_ESP_DIR_IN, s);
		for (i = done; i < done + k; i++) {
			const struct esp_spd_cache4 *e = cache4_find(&w, pkts[i]);

			if (e == NULL) {
				idx[nm] = i;
				miss[nm++] = pkts[i];
				continue;
			}
			ok[i] = e->action == EGW_ESP_PROTECT &&
				(e->sa == via[i] || e->prev == via[i]);
		}
		cache4_walk_flush(&w);
		if (nm == 0)
			continue;
		spd_lookup_burst(c, EGW_ESP_DIR_IN, s, miss, nm, act, sa, prev);
		for (i = 0; i < nm; i++)
			ok[idx[i]] = act[i] == EGW_ESP_PROTECT &&
				     (sa[i] == via[idx[i]] || prev[i] == via[idx[i]]);
	}
}

/* The drop reason of a lookup action that drops (the caller's direction
 * turns PROTECT into a drop itself where it must). */
static inline enum egw_esp_drop
spd_drop_reason(uint8_t action)
{
	switch (action) {
	case EGW_ESP_DISCARD: return EGW_ESP_DROP_POLICY_DISCARD;
	case ESP_ACT_DEF_DISCARD: return EGW_ESP_DROP_POLICY_DEFAULT;
	case ESP_ACT_PROTO_UNKNOWN: return EGW_ESP_DROP_PROTO_UNKNOWN;
	default: return EGW_ESP_DROP_NOT_IP;
	}
}

/* Count what a data-path call did in the context and the caller's result
 * (which accumulates over calls). */
static void
spd_account(struct egw_esp_ctx *c, struct egw_esp_res *res, uint32_t bypass,
	    const uint32_t drop[ESP_ACT_MAX])
{
	unsigned int a;

	c->st.bypass += bypass;
	res->bypass += bypass;
	for (a = 0; a < ESP_ACT_MAX; a++) {
		enum egw_esp_drop r;

		if (drop[a] == 0)
			continue;
		/* inbound clear frames a protect rule names arrived in clear */
		r = a == EGW_ESP_PROTECT ? EGW_ESP_DROP_IN_CLEAR : spd_drop_reason((uint8_t)a);
		c->st.drop[r] += drop[a];
		res->drop[r] += drop[a];
	}
}

uint16_t
egw_esp_outbound_lookup(struct egw_esp_ctx *c, struct rte_mbuf *pkts[], uint16_t n,
			struct egw_esp_sa *sa[], struct egw_esp_res *res)
{
	uint8_t act[EGW_ESP_MAX_BURST];
	struct egw_esp_sa *msa[EGW_ESP_MAX_BURST];
	struct egw_esp_sa *psa[EGW_ESP_MAX_BURST];
	struct rte_mbuf *prot[EGW_ESP_MAX_BURST];
	struct rte_mbuf *byp[EGW_ESP_MAX_BURST];
	struct rte_mbuf *drop[EGW_ESP_MAX_BURST];
	uint16_t done, k, i, np = 0, nb = 0;
	uint32_t ndrop[ESP_ACT_MAX] = {0};

	/* pkts[0..np) protect, pkts[np..np+nb) bypass, then the unread rest */
	for (done = 0; done < n; done += k) {
		uint16_t cp = 0, cb = 0, cd = 0;

		k = RTE_MIN(n - done, EGW_ESP_MAX_BURST);
		esp_spd_lookup(c, EGW_ESP_DIR_OUT, pkts + done, k, act, msa, NULL);
		for (i = 0; i < k; i++) {
			struct rte_mbuf *m = pkts[done + i];

			switch (act[i]) {
			case EGW_ESP_PROTECT:
				psa[cp] = msa[i];
				prot[cp++] = m;
				break;
			case EGW_ESP_BYPASS: byp[cb++] = m; break;
			default:
				ndrop[act[i]]++;
				drop[cd++] = m;
				break;
			}
		}
		/* only a call above EGW_ESP_MAX_BURST has earlier bypass
		 * packets to move behind this chunk's protected ones */
		if (cp > 0 && nb > 0)
			memmove(&pkts[np + cp], &pkts[np], nb * sizeof(pkts[0]));
		memcpy(&pkts[np], prot, cp * sizeof(pkts[0]));
		memcpy(&sa[np], psa, cp * sizeof(sa[0]));
		np += cp;
		memcpy(&pkts[np + nb], byp, cb * sizeof(pkts[0]));
		nb += cb;
		if (cd > 0)
			rte_pktmbuf_free_bulk(drop, cd);
	}
	spd_account(c, res, nb, ndrop);
	return np;
}

uint16_t
egw_esp_inbound_clear(struct egw_esp_ctx *c, struct rte_mbuf *pkts[], uint16_t n,
		      struct egw_esp_res *res)
{
	uint8_t act[EGW_ESP_MAX_BURST];
	struct egw_esp_sa *msa[EGW_ESP_MAX_BURST];
	struct rte_mbuf *drop[EGW_ESP_MAX_BURST];
	uint16_t done, k, i, ng = 0;
	uint32_t ndrop[ESP_ACT_MAX] = {0};

	for (done = 0; done < n; done += k) {
		uint16_t cd = 0;

		k = RTE_MIN(n - done, EGW_ESP_MAX_BURST);
		esp_spd_lookup(c, EGW_ESP_DIR_IN, pkts + done, k, act, msa, NULL);
		for (i = 0; i < k; i++) {
			struct rte_mbuf *m = pkts[done + i];

			if (act[i] == EGW_ESP_BYPASS) {
				pkts[ng++] = m; /* ng <= done + i */
				continue;
			}
			/* PROTECT: it should have come through its SA */
			ndrop[act[i]]++;
			drop[cd++] = m;
		}
		if (cd > 0)
			rte_pktmbuf_free_bulk(drop, cd);
	}
	spd_account(c, res, ng, ndrop);
	return ng;
}
