/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Address pools: IPv4 pools hand out single addresses (IPCP), IPv6 pools hand
 * out /64 prefixes (router advertisements, RFC 4862 SLAAC on the client).
 *
 * IPv4 a.b.c.d/len (8..30): the network and broadcast addresses are never
 * given; the first host address is the concentrator's own (the IPCP local
 * address and the source of ICMP errors); the rest go to subscribers.
 * IPv6 prefix/len (32..63): the first /64 is the concentrator's own (its ::1
 * is the source of router advertisements and ICMPv6 errors); subscribers get
 * one /64 each. A pool holds at most 2^16 /64s: a shorter prefix uses only
 * its first 65,536 /64s (a bitmap of 8 KiB rather than up to 512 MiB).
 *
 * Allocation is next-fit over a bitmap per pool: an address released is not
 * the next one handed out, so a returning subscriber rarely gets the address
 * a previous one just had while packets to it may still be in flight.
 * Pools are searched in the order they were added. Control path only.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>

#include "pppoe_private.h"

#define POOL_MAX 16 /* per family */
#define POOL4_LEN_MIN 8
#define POOL4_LEN_MAX 30
#define POOL6_LEN_MIN 32
#define POOL6_LEN_MAX 63
#define POOL6_MAX_PREFIXES (1u << 16)

struct pool {
	uint64_t base;    /**< IPv4: network address; IPv6: the prefix's top 64 bits */
	uint8_t len;      /**< prefix length */
	uint32_t size;    /**< entries in the bitmap (addresses or /64s) */
	uint32_t used;    /**< entries given to sessions or reserved */
	uint32_t next;    /**< next-fit cursor */
	uint64_t *bitmap; /**< 1 = not available */
};

static struct pool pools4[POOL_MAX], pools6[POOL_MAX];
static unsigned int nb_pools4, nb_pools6;

static void err_set(char *err, size_t errlen, const char *fmt, ...) __rte_format_printf(3, 4);

static void
err_set(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static inline bool
bit_get(const uint64_t *bm, uint32_t i)
{
	return (bm[i / 64] >> (i % 64)) & 1;
}

static inline void
bit_set(uint64_t *bm, uint32_t i)
{
	bm[i / 64] |= UINT64_C(1) << (i % 64);
}

static inline void
bit_clear(uint64_t *bm, uint32_t i)
{
	bm[i / 64] &= ~(UINT64_C(1) << (i % 64));
}

/* First clear bit in [lo, hi), or -1. Bits past size in the last word are clear. */
static int64_t
find_clear(const uint64_t *bm, uint32_t lo, uint32_t hi)
{
	uint32_t i = lo;

	while (i < hi) {
		uint64_t w = ~bm[i / 64] & (~UINT64_C(0) << (i % 64));

		if (w != 0) {
			uint32_t b = (i & ~UINT32_C(63)) + (uint32_t)__builtin_ctzll(w);

			return b < hi ? (int64_t)b : -1;
		}
		i = (i & ~UINT32_C(63)) + 64;
	}
	return -1;
}

/* Next fit: the first clear bit from the cursor on, wrapping once; -1 if none. */
static int64_t
bit_find_clear(const struct pool *p, uint32_t from)
{
	int64_t b = find_clear(p->bitmap, from, p->size);

	return b >= 0 ? b : find_clear(p->bitmap, 0, from);
}

/* Parse "prefix/len" of a family; 0 or -EINVAL with a message. */
static int
prefix_parse(const char *s, int af, uint8_t addr[16], uint8_t *len, char *err, size_t errlen)
{
	char buf[INET6_ADDRSTRLEN + 8];
	const char *slash;
	unsigned long l;
	char *end;
	size_t n;

	if (s == NULL) {
		err_set(err, errlen, "no prefix");
		return -EINVAL;
	}
	slash = strchr(s, '/');
	if (slash == NULL) {
		err_set(err, errlen, "%s: prefix length missing (address/length)", s);
		return -EINVAL;
	}
	n = (size_t)(slash - s);
	if (n == 0 || n >= sizeof(buf)) {
		err_set(err, errlen, "%s: not an address/length", s);
		return -EINVAL;
	}
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (inet_pton(af, buf, addr) != 1) {
		err_set(err, errlen, "%s: '%s' is not an IPv%c address", s, buf,
			af == AF_INET ? '4' : '6');
		return -EINVAL;
	}
	if (slash[1] < '0' || slash[1] > '9') {
		err_set(err, errlen, "%s: bad prefix length", s);
		return -EINVAL;
	}
	l = strtoul(slash + 1, &end, 10);
	if (*end != '\0' || l > 128) {
		err_set(err, errlen, "%s: bad prefix length", s);
		return -EINVAL;
	}
	*len = (uint8_t)l;
	return 0;
}

/* Text of a pool, for messages and the walk. */
static void
pool_text(const struct pool *p, int af, char *buf, size_t size)
{
	char a[INET6_ADDRSTRLEN];
	uint8_t b[16];

	memset(b, 0, sizeof(b));
	if (af == AF_INET) {
		rte_be32_t v = rte_cpu_to_be_32((uint32_t)p->base);

		memcpy(b, &v, 4);
	} else {
		rte_be64_t v = rte_cpu_to_be_64(p->base);

		memcpy(b, &v, 8);
	}
	inet_ntop(af, b, a, sizeof(a));
	snprintf(buf, size, "%s/%u", a, p->len);
}

static void
local4_update(void)
{
	rte_be32_t v = 0;

	/* the first host address of the first pool */
	if (nb_pools4 != 0)
		v = rte_cpu_to_be_32((uint32_t)pools4[0].base + 1);
	/* relaxed: the data path only takes it as an ICMP source */
	__atomic_store_n(&pppoe_g.local4, v, __ATOMIC_RELAXED);
}

static void
local6_update(void)
{
	uint8_t v[16];
	unsigned int i;

	/* ::1 in the first /64 of the first pool */
	memset(v, 0, sizeof(v));
	if (nb_pools6 != 0) {
		rte_be64_t b = rte_cpu_to_be_64(pools6[0].base);

		memcpy(v, &b, 8);
		v[15] = 1;
	}
	/* Relaxed byte stores: workers copy it for an ICMPv6 error's source
	 * (fast.c icmp_too_big); a reader may see a mix of the old and new
	 * address for an instant, which only changes that source. */
	for (i = 0; i < sizeof(v); i++)
		__atomic_store_n(&pppoe_g.local6[i], v[i], __ATOMIC_RELAXED);
}

/* Do [a, a + 2^(w - la)) and [b, b + 2^(w - lb)) meet? (w = 32 or 64 bits) */
static bool
overlaps(uint64_t a, uint8_t la, uint64_t b, uint8_t lb, unsigned int w)
{
	/* lengths are at least 3: the shift is below 64 */
	uint64_t mask = ~UINT64_C(0) << (w - RTE_MIN(la, lb));

	return ((a ^ b) & mask) == 0;
}

static int
pool_add4(const char *prefix, const uint8_t a[16], uint8_t len, char *err, size_t errlen)
{
	struct pool *p;
	uint32_t net, mask, size;
	unsigned int i;
	char t[64];

	if (len < POOL4_LEN_MIN || len > POOL4_LEN_MAX) {
		err_set(err, errlen, "%s: IPv4 pool length must be %u..%u", prefix, POOL4_LEN_MIN,
			POOL4_LEN_MAX);
		return -EINVAL;
	}
	memcpy(&net, a, 4);
	net = rte_be_to_cpu_32(net);
	mask = UINT32_MAX << (32 - len);
	if ((net & ~mask) != 0) {
		rte_be32_t n = rte_cpu_to_be_32(net & mask);
		char t4[INET_ADDRSTRLEN];

		inet_ntop(AF_INET, &n, t4, sizeof(t4));
		err_set(err, errlen, "%s: host bits set (the network is %s/%u)", prefix, t4, len);
		return -EINVAL;
	}
	/* never hand out "this network", loopback, multicast or reserved
	 * addresses (RFC 1122 3.2.1.3, RFC 5771, RFC 1112) */
	if (overlaps(net, len, 0x00000000, 8, 32) || overlaps(net, len, 0x7f000000, 8, 32) ||
	    overlaps(net, len, 0xe0000000, 3, 32)) {
		err_set(err, errlen,
			"%s: overlaps 0.0.0.0/8, 127.0.0.0/8 or 224.0.0.0/3 (not unicast "
			"addresses a subscriber may use)",
			prefix);
		return -EINVAL;
	}
	for (i = 0; i < nb_pools4; i++) {
		if (overlaps(net, len, pools4[i].base, pools4[i].len, 32)) {
			pool_text(&pools4[i], AF_INET, t, sizeof(t));
			err_set(err, errlen, "%s overlaps pool %s", prefix, t);
			return -EEXIST;
		}
	}
	if (nb_pools4 == POOL_MAX) {
		err_set(err, errlen, "at most %u IPv4 pools", POOL_MAX);
		return -ENOSPC;
	}
	size = UINT32_C(1) << (32 - len);
	p = &pools4[nb_pools4];
	p->bitmap = calloc((size + 63) / 64, sizeof(uint64_t));
	if (p->bitmap == NULL) {
		err_set(err, errlen, "%s: out of memory", prefix);
		return -ENOMEM;
	}
	p->base = net;
	p->len = len;
	p->size = size;
	p->used = 0;
	p->next = 2;
	/* never given: network, our own first host address, broadcast */
	bit_set(p->bitmap, 0);
	bit_set(p->bitmap, 1);
	bit_set(p->bitmap, size - 1);
	nb_pools4++;
	local4_update();
	return 0;
}

static int
pool_add6(const char *prefix, const uint8_t a[16], uint8_t len, char *err, size_t errlen)
{
	static const uint8_t zero[8];
	struct pool *p;
	uint64_t net, mask;
	unsigned int i;
	uint32_t size;
	char t[64];

	if (len < POOL6_LEN_MIN || len > POOL6_LEN_MAX) {
		err_set(err, errlen, "%s: IPv6 pool length must be %u..%u", prefix, POOL6_LEN_MIN,
			POOL6_LEN_MAX);
		return -EINVAL;
	}
	memcpy(&net, a, 8);
	net = rte_be_to_cpu_64(net);
	mask = ~UINT64_C(0) << (64 - len);
	if ((net & ~mask) != 0 || memcmp(a + 8, zero, 8) != 0) {
		err_set(err, errlen, "%s: host bits set beyond /%u", prefix, len);
		return -EINVAL;
	}
	for (i = 0; i < nb_pools6; i++) {
		if (overlaps(net, len, pools6[i].base, pools6[i].len, 64)) {
			pool_text(&pools6[i], AF_INET6, t, sizeof(t));
			err_set(err, errlen, "%s overlaps pool %s", prefix, t);
			return -EEXIST;
		}
	}
	if (nb_pools6 == POOL_MAX) {
		err_set(err, errlen, "at most %u IPv6 pools", POOL_MAX);
		return -ENOSPC;
	}
	size = 64 - len >= 16 ? POOL6_MAX_PREFIXES : UINT32_C(1) << (64 - len);
	p = &pools6[nb_pools6];
	p->bitmap = calloc((size + 63) / 64, sizeof(uint64_t));
	if (p->bitmap == NULL) {
		err_set(err, errlen, "%s: out of memory", prefix);
		return -ENOMEM;
	}
	p->base = net;
	p->len = len;
	p->size = size;
	p->used = 0;
	p->next = 1;
	bit_set(p->bitmap, 0); /* our own /64 */
	nb_pools6++;
	local6_update();
	return 0;
}

int
egw_pppoe_pool_add(const char *prefix, char *err, size_t errlen)
{
	uint8_t a[16];
	uint8_t len;
	int af, rc;

	err_set(err, errlen, "%s", "");
	af = prefix != NULL && strchr(prefix, ':') != NULL ? AF_INET6 : AF_INET;
	rc = prefix_parse(prefix, af, a, &len, err, errlen);
	if (rc != 0)
		return rc;
	return af == AF_INET ? pool_add4(prefix, a, len, err, errlen)
			     : pool_add6(prefix, a, len, err, errlen);
}

/* Index of the pool exactly equal to base/len, or -1. */
static int
pool_index(const struct pool *tab, unsigned int n, uint64_t base, uint8_t len)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (tab[i].base == base && tab[i].len == len)
			return (int)i;
	return -1;
}

int
egw_pppoe_pool_del(const char *prefix, char *err, size_t errlen)
{
	struct pool *tab;
	unsigned int *n;
	uint64_t base;
	uint8_t a[16];
	uint8_t len;
	int af, rc, i;

	err_set(err, errlen, "%s", "");
	af = prefix != NULL && strchr(prefix, ':') != NULL ? AF_INET6 : AF_INET;
	rc = prefix_parse(prefix, af, a, &len, err, errlen);
	if (rc != 0)
		return rc;
	if (af == AF_INET) {
		uint32_t v;

		memcpy(&v, a, 4);
		base = rte_be_to_cpu_32(v);
		tab = pools4;
		n = &nb_pools4;
	} else {
		uint64_t v;

		memcpy(&v, a, 8);
		base = rte_be_to_cpu_64(v);
		tab = pools6;
		n = &nb_pools6;
	}
	i = pool_index(tab, *n, base, len);
	if (i < 0) {
		err_set(err, errlen, "%s: no such pool", prefix);
		return -ENOENT;
	}
	if (tab[i].used != 0) {
		err_set(err, errlen, "%s: %u addresses still in use", prefix, tab[i].used);
		return -EBUSY;
	}
	free(tab[i].bitmap);
	memmove(&tab[i], &tab[i + 1], (*n - (unsigned int)i - 1) * sizeof(tab[0]));
	(*n)--;
	memset(&tab[*n], 0, sizeof(tab[0]));
	if (af == AF_INET)
		local4_update();
	else
		local6_update();
	return 0;
}

void
pppoe_pool_count(unsigned int *nb4, unsigned int *nb6)
{
	*nb4 = nb_pools4;
	*nb6 = nb_pools6;
}

/* The IPv4 pool holding a (host order) and its index there, or NULL. */
static struct pool *
pool4_of(uint32_t a, uint32_t *idx)
{
	unsigned int i;

	for (i = 0; i < nb_pools4; i++) {
		struct pool *p = &pools4[i];

		if ((a & (UINT32_MAX << (32 - p->len))) == (uint32_t)p->base) {
			*idx = a - (uint32_t)p->base;
			return p;
		}
	}
	return NULL;
}

/* A free address of pool p (network order), 0 if it is full. */
static rte_be32_t
pool4_take(struct pool *p)
{
	int64_t b;

	if (p->used == p->size - 3)
		return 0;
	b = bit_find_clear(p, p->next);
	if (b < 0)
		return 0;
	bit_set(p->bitmap, (uint32_t)b);
	p->used++;
	p->next = (uint32_t)b + 1 < p->size ? (uint32_t)b + 1 : 0;
	return rte_cpu_to_be_32((uint32_t)p->base + (uint32_t)b);
}

rte_be32_t
pppoe_pool4_alloc(void)
{
	unsigned int i;
	rte_be32_t a;

	for (i = 0; i < nb_pools4; i++) {
		a = pool4_take(&pools4[i]);
		if (a != 0)
			return a;
	}
	return 0;
}

static struct pool *
pool4_named(const char *name)
{
	char t[INET6_ADDRSTRLEN + 8];
	unsigned int i;

	for (i = 0; i < nb_pools4; i++) {
		pool_text(&pools4[i], AF_INET, t, sizeof(t));
		if (strcmp(t, name) == 0)
			return &pools4[i];
	}
	return NULL;
}

rte_be32_t
pppoe_pool4_alloc_named(const char *name)
{
	struct pool *p = pool4_named(name);

	return p != NULL ? pool4_take(p) : 0;
}

bool
pppoe_pool4_named_exists(const char *name)
{
	return pool4_named(name) != NULL;
}

int
pppoe_pool4_reserve(rte_be32_t addr)
{
	uint32_t a = rte_be_to_cpu_32(addr), idx;
	struct pool *p = pool4_of(a, &idx);

	if (p == NULL)
		return 1;
	/* taken, or the network, our own or the broadcast address */
	if (bit_get(p->bitmap, idx))
		return -EBUSY;
	bit_set(p->bitmap, idx);
	p->used++;
	return 0;
}

void
pppoe_pool4_release(rte_be32_t addr)
{
	uint32_t a = rte_be_to_cpu_32(addr), idx;
	struct pool *p = pool4_of(a, &idx);

	/* addresses in no pool (static ones outside) and the ones never given */
	if (p == NULL || idx <= 1 || idx == p->size - 1 || !bit_get(p->bitmap, idx))
		return;
	bit_clear(p->bitmap, idx);
	p->used--;
}

int
pppoe_pool6_alloc(uint8_t prefix[8])
{
	unsigned int i;

	for (i = 0; i < nb_pools6; i++) {
		struct pool *p = &pools6[i];
		rte_be64_t v;
		int64_t b;

		if (p->used == p->size - 1)
			continue;
		b = bit_find_clear(p, p->next);
		if (b < 0)
			continue;
		bit_set(p->bitmap, (uint32_t)b);
		p->used++;
		p->next = (uint32_t)b + 1 < p->size ? (uint32_t)b + 1 : 0;
		v = rte_cpu_to_be_64(p->base + (uint64_t)b);
		memcpy(prefix, &v, 8);
		return 0;
	}
	return -ENOSPC;
}

void
pppoe_pool6_release(const uint8_t prefix[8])
{
	unsigned int i;
	uint64_t a;

	memcpy(&a, prefix, 8);
	a = rte_be_to_cpu_64(a);
	for (i = 0; i < nb_pools6; i++) {
		struct pool *p = &pools6[i];
		uint64_t idx;

		if ((a & (~UINT64_C(0) << (64 - p->len))) != p->base)
			continue;
		idx = a - p->base;
		if (idx == 0 || idx >= p->size || !bit_get(p->bitmap, (uint32_t)idx))
			return;
		bit_clear(p->bitmap, (uint32_t)idx);
		p->used--;
		return;
	}
}

void
egw_pppoe_pools_walk(void (*fn)(const char *prefix, unsigned int used, unsigned int size,
				void *arg),
		     void *arg)
{
	char t[64];
	unsigned int i;

	/* size: what subscribers can get (our own, network and broadcast apart) */
	for (i = 0; i < nb_pools4; i++) {
		pool_text(&pools4[i], AF_INET, t, sizeof(t));
		fn(t, pools4[i].used, pools4[i].size - 3, arg);
	}
	for (i = 0; i < nb_pools6; i++) {
		pool_text(&pools6[i], AF_INET6, t, sizeof(t));
		fn(t, pools6[i].used, pools6[i].size - 1, arg);
	}
}

void
pppoe_pool_fini(void)
{
	unsigned int i;

	for (i = 0; i < nb_pools4; i++)
		free(pools4[i].bitmap);
	for (i = 0; i < nb_pools6; i++)
		free(pools6[i].bitmap);
	memset(pools4, 0, sizeof(pools4));
	memset(pools6, 0, sizeof(pools6));
	nb_pools4 = 0;
	nb_pools6 = 0;
	local4_update();
	local6_update();
}
