/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control path: the authorisation attributes of an Access-Accept or a
 * CoA-Request (RFC 2865 5, RFC 2869 5.16, RFC 3162, RFC 4818, RFC 6911,
 * Microsoft's DNS attributes of RFC 2548 and MikroTik's Mikrotik-Rate-Limit)
 * parsed into struct egw_radius_authz. A value of the wrong size or out of
 * range is skipped and counted in bad, never half-applied.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "radius_private.h"

static uint32_t
get_u32(const uint8_t *v)
{
	return (uint32_t)v[0] << 24 | (uint32_t)v[1] << 16 | (uint32_t)v[2] << 8 | v[3];
}

/* A text value as a C string (NULs inside refused). */
static bool
text(const uint8_t *v, uint8_t l, char *out, size_t room)
{
	if (l == 0 || l >= room || memchr(v, '\0', l) != NULL)
		return false;
	memcpy(out, v, l);
	out[l] = '\0';
	return true;
}

/* "prefix[/len]" up to the first space, of family fam */
static int
prefix_text(const uint8_t *s, size_t n, int fam, struct egw_radius_prefix *r)
{
	char buf[INET6_ADDRSTRLEN + 8], *slash, *end;
	unsigned long len;
	size_t k = 0;
	unsigned int max = fam == AF_INET ? 32 : 128;

	while (k < n && s[k] != ' ')
		k++;
	if (k == 0 || k >= sizeof(buf) || memchr(s, '\0', k) != NULL)
		return -EINVAL;
	memcpy(buf, s, k);
	buf[k] = '\0';
	memset(r, 0, sizeof(*r));
	slash = strchr(buf, '/');
	len = max;
	if (slash != NULL) {
		*slash = '\0';
		if (slash[1] < '0' || slash[1] > '9')
			return -EINVAL;
		len = strtoul(slash + 1, &end, 10);
		if (*end != '\0' || len > max)
			return -EINVAL;
	}
	if (inet_pton(fam, buf, r->addr) != 1)
		return -EINVAL;
	r->family = (uint8_t)fam;
	r->len = (uint8_t)len;
	return 0;
}

int
egw_radius_route4_parse(const uint8_t *s, size_t n, struct egw_radius_prefix *r)
{
	return prefix_text(s, n, AF_INET, r);
}

/* RFC 3162 2.3 / RFC 4818: Reserved, Prefix-Length, Prefix (0..16 bytes,
 * at least enough for the length) */
static bool
prefix6_bin(const uint8_t *v, uint8_t l, struct egw_radius_prefix *r)
{
	if (l < 2 || l > 18 || v[1] > 128 || (size_t)(v[1] + 7) / 8 > (size_t)(l - 2))
		return false;
	memset(r, 0, sizeof(*r));
	r->family = AF_INET6;
	r->len = v[1];
	memcpy(r->addr, &v[2], (size_t)(l - 2));
	return true;
}

static bool
rate_one(const char **p, const char *end, uint64_t *v)
{
	uint64_t x = 0;
	const char *s = *p;

	if (s >= end || *s < '0' || *s > '9')
		return false;
	while (s < end && *s >= '0' && *s <= '9') {
		if (x > UINT64_MAX / 10 - 10)
			return false;
		x = x * 10 + (uint64_t)(*s++ - '0');
	}
	if (s < end && (*s == 'k' || *s == 'K')) {
		x *= 1000;
		s++;
	} else if (s < end && *s == 'M') {
		x *= 1000000;
		s++;
	} else if (s < end && *s == 'G') {
		x *= 1000000000;
		s++;
	}
	*v = x;
	*p = s;
	return true;
}

int
egw_radius_rate_parse(const uint8_t *s, size_t n, uint64_t *rx, uint64_t *tx)
{
	const char *p = (const char *)s, *end = p + n;

	/* MikroTik: "rx-rate[/tx-rate] [bursts ...]", rx from the NAS's side
	 * (the subscriber's upload); tx defaults to rx */
	if (!rate_one(&p, end, rx))
		return -EINVAL;
	*tx = *rx;
	if (p < end && *p == '/') {
		p++;
		if (!rate_one(&p, end, tx))
			return -EINVAL;
	}
	if (p < end && *p != ' ')
		return -EINVAL;
	return 0;
}

static void
vsa(const uint8_t *v, uint8_t l, struct egw_radius_authz *z)
{
	uint32_t vendor;
	uint8_t vt, vl;
	size_t off = 4;

	if (l < 6) {
		z->bad++;
		return;
	}
	vendor = get_u32(v);
	if (vendor != EGW_RADIUS_VENDOR_MICROSOFT && vendor != EGW_RADIUS_VENDOR_MIKROTIK)
		return;
	/* RFC 2865 5.26's suggested format: type, length, value, repeated */
	while (off + 2 <= l) {
		vt = v[off];
		vl = v[off + 1];
		if (vl < 2 || off + vl > l) {
			z->bad++;
			return;
		}
		if (vendor == EGW_RADIUS_VENDOR_MICROSOFT &&
		    (vt == EGW_RADIUS_MS_PRIMARY_DNS || vt == EGW_RADIUS_MS_SECONDARY_DNS)) {
			if (vl != 6) {
				z->bad++;
			} else {
				memcpy(&z->dns4[vt == EGW_RADIUS_MS_PRIMARY_DNS ? 0 : 1],
				       &v[off + 2], 4);
				z->present |= EGW_RADIUS_Z_DNS4;
			}
		} else if (vendor == EGW_RADIUS_VENDOR_MIKROTIK &&
			   vt == EGW_RADIUS_MIKROTIK_RATE_LIMIT) {
			if (egw_radius_rate_parse(&v[off + 2], (size_t)(vl - 2), &z->rate_up_bps,
						  &z->rate_down_bps) == 0)
				z->present |= EGW_RADIUS_Z_RATE;
			else
				z->bad++;
		}
		off += vl;
	}
}

static void
route_add(struct egw_radius_authz *z, const uint8_t *v, uint8_t l, int fam)
{
	struct egw_radius_prefix r;

	if (prefix_text(v, l, fam, &r) < 0 || z->nb_routes >= EGW_RADIUS_MAX_ROUTES) {
		z->bad++;
		return;
	}
	z->routes[z->nb_routes++] = r;
	z->present |= EGW_RADIUS_Z_ROUTES;
}

void
egw_radius_authz_parse(const uint8_t *pkt, size_t len, struct egw_radius_authz *z)
{
	struct egw_radius_iter it;
	const uint8_t *v;
	uint8_t t, l;
	unsigned int dns6 = 0;

	memset(z, 0, sizeof(*z));
	egw_radius_iter_init(&it, pkt, len);
	while (egw_radius_iter_next(&it, &t, &v, &l)) {
		uint32_t u = l == 4 ? get_u32(v) : 0;

		switch (t) {
		case EGW_RADIUS_A_FRAMED_IP_ADDRESS:
			if (l != 4) {
				z->bad++;
				break;
			}
			/* 255.255.255.254: the NAS chooses (a pool), RFC 2865 5.8;
			 * 255.255.255.255: the user chooses, which we do not allow */
			if (u == 0xfffffffe || u == 0xffffffff)
				break;
			memcpy(&z->framed_ip, v, 4);
			z->present |= EGW_RADIUS_Z_FRAMED_IP;
			break;
		case EGW_RADIUS_A_FRAMED_POOL:
			if (text(v, l, z->framed_pool, sizeof(z->framed_pool)))
				z->present |= EGW_RADIUS_Z_FRAMED_POOL;
			else
				z->bad++;
			break;
		case EGW_RADIUS_A_FRAMED_IPV6_PREFIX:
			if (prefix6_bin(v, l, &z->framed_ipv6_prefix))
				z->present |= EGW_RADIUS_Z_IPV6_PREFIX;
			else
				z->bad++;
			break;
		case EGW_RADIUS_A_DELEGATED_IPV6_PREFIX:
			if (prefix6_bin(v, l, &z->delegated_prefix))
				z->present |= EGW_RADIUS_Z_DELEGATED;
			else
				z->bad++;
			break;
		case EGW_RADIUS_A_FRAMED_ROUTE: route_add(z, v, l, AF_INET); break;
		case EGW_RADIUS_A_FRAMED_IPV6_ROUTE: route_add(z, v, l, AF_INET6); break;
		case EGW_RADIUS_A_DNS_SERVER_IPV6_ADDRESS:
			if (l != 16 || dns6 >= 2) {
				z->bad++;
				break;
			}
			memcpy(z->dns6[dns6++], v, 16);
			z->present |= EGW_RADIUS_Z_DNS6;
			break;
		case EGW_RADIUS_A_SESSION_TIMEOUT:
		case EGW_RADIUS_A_IDLE_TIMEOUT:
		case EGW_RADIUS_A_ACCT_INTERIM_INTERVAL:
			if (l != 4) {
				z->bad++;
				break;
			}
			if (t == EGW_RADIUS_A_SESSION_TIMEOUT) {
				z->session_timeout = u;
				z->present |= EGW_RADIUS_Z_SESSION_TIMEOUT;
			} else if (t == EGW_RADIUS_A_IDLE_TIMEOUT) {
				z->idle_timeout = u;
				z->present |= EGW_RADIUS_Z_IDLE_TIMEOUT;
			} else {
				z->interim_interval = u;
				z->present |= EGW_RADIUS_Z_INTERIM;
			}
			break;
		case EGW_RADIUS_A_FRAMED_MTU:
			/* RFC 2865 5.12: 64..65535; PPP needs at least 576 */
			if (l != 4 || u < 576 || u > 65535) {
				z->bad++;
				break;
			}
			z->framed_mtu = (uint16_t)u;
			z->present |= EGW_RADIUS_Z_MTU;
			break;
		case EGW_RADIUS_A_FILTER_ID:
			if (text(v, l, z->filter_id, sizeof(z->filter_id)))
				z->present |= EGW_RADIUS_Z_FILTER_ID;
			else
				z->bad++;
			break;
		case EGW_RADIUS_A_CLASS:
			if (l == 0 || z->nb_class >= EGW_RADIUS_MAX_CLASS) {
				z->bad++;
				break;
			}
			memcpy(z->class_val[z->nb_class], v, l);
			z->class_len[z->nb_class++] = l;
			z->present |= EGW_RADIUS_Z_CLASS;
			break;
		case EGW_RADIUS_A_REPLY_MESSAGE: {
			/* several are concatenated (RFC 2865 5.18) */
			size_t have = strlen(z->reply_message), k;

			for (k = 0; k < l && have + 1 < sizeof(z->reply_message); k++)
				z->reply_message[have++] =
					v[k] >= 0x20 && v[k] < 0x7f ? (char)v[k] : '.';
			z->reply_message[have] = '\0';
			z->present |= EGW_RADIUS_Z_REPLY_MESSAGE;
			break;
		}
		case EGW_RADIUS_A_VENDOR_SPECIFIC: vsa(v, l, z); break;
		default: break;
		}
	}
}
