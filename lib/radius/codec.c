/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control path: the RADIUS packet codec (RFC 2865 section 3 and 5), the
 * User-Password hiding of RFC 2865 5.2, the Request/Response Authenticators
 * (RFC 2865 3, RFC 2866 3, RFC 5176 3.1) and the Message-Authenticator of
 * RFC 3579 3.2 / RFC 5176 3.3, on libcrypto's MD5 and HMAC-MD5.
 *
 * Pure functions over caller buffers: no state, no EAL, so the unit tests
 * and the fuzz target run them as they are. Every length is checked against
 * the bytes present before anything behind it is read.
 */
#include <errno.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "radius_private.h"

int
egw_radius_pkt_init(struct egw_radius_pkt *p, uint8_t *buf, size_t room, uint8_t code, uint8_t id)
{
	if (p == NULL || buf == NULL || room < EGW_RADIUS_HDR_LEN)
		return -EINVAL;
	p->buf = buf;
	p->room = room < EGW_RADIUS_PKT_MAX ? room : EGW_RADIUS_PKT_MAX;
	memset(buf, 0, EGW_RADIUS_HDR_LEN);
	buf[0] = code;
	buf[1] = id;
	p->len = EGW_RADIUS_HDR_LEN;
	buf[2] = (uint8_t)(p->len >> 8);
	buf[3] = (uint8_t)p->len;
	return 0;
}

int
egw_radius_attr_put(struct egw_radius_pkt *p, uint8_t type, const void *val, size_t len)
{
	if (len == 0 || len > 253 || (val == NULL && len != 0))
		return -EINVAL;
	if (p->len + 2 + len > p->room)
		return -ENOSPC;
	p->buf[p->len] = type;
	p->buf[p->len + 1] = (uint8_t)(len + 2);
	memcpy(&p->buf[p->len + 2], val, len);
	p->len += 2 + len;
	p->buf[2] = (uint8_t)(p->len >> 8);
	p->buf[3] = (uint8_t)p->len;
	return 0;
}

int
egw_radius_attr_put_u32(struct egw_radius_pkt *p, uint8_t type, uint32_t v)
{
	uint8_t b[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};

	return egw_radius_attr_put(p, type, b, sizeof(b));
}

int
egw_radius_vsa_put(struct egw_radius_pkt *p, uint32_t vendor, uint8_t vtype, const void *val,
		   size_t len)
{
	uint8_t b[253];

	/* Vendor-Id (4), Vendor type (1), Vendor length (1), value */
	if (len == 0 || len > sizeof(b) - 6)
		return -EINVAL;
	b[0] = (uint8_t)(vendor >> 24);
	b[1] = (uint8_t)(vendor >> 16);
	b[2] = (uint8_t)(vendor >> 8);
	b[3] = (uint8_t)vendor;
	b[4] = vtype;
	b[5] = (uint8_t)(len + 2);
	memcpy(&b[6], val, len);
	return egw_radius_attr_put(p, EGW_RADIUS_A_VENDOR_SPECIFIC, b, len + 6);
}

enum egw_radius_err
egw_radius_check(const uint8_t *buf, size_t len, size_t *plen)
{
	size_t n, off;

	if (buf == NULL || len < EGW_RADIUS_HDR_LEN)
		return EGW_RADIUS_E_SHORT;
	n = (size_t)buf[2] << 8 | buf[3];
	/* RFC 2865 3: shorter than Length is discarded, longer is padding */
	if (n < EGW_RADIUS_HDR_LEN || n > EGW_RADIUS_PKT_MAX || n > len)
		return EGW_RADIUS_E_LENGTH;
	for (off = EGW_RADIUS_HDR_LEN; off < n; off += buf[off + 1]) {
		if (off + 2 > n || buf[off + 1] < 2 || off + buf[off + 1] > n)
			return EGW_RADIUS_E_ATTR;
	}
	if (plen != NULL)
		*plen = n;
	return EGW_RADIUS_OK;
}

void
egw_radius_iter_init(struct egw_radius_iter *it, const uint8_t *pkt, size_t len)
{
	it->p = pkt;
	it->off = EGW_RADIUS_HDR_LEN;
	it->len = len;
}

bool
egw_radius_iter_next(struct egw_radius_iter *it, uint8_t *type, const uint8_t **val, uint8_t *vlen)
{
	uint8_t l;

	/* checked by egw_radius_check(); again here, so a caller that skipped
	 * it reads nothing past the end */
	if (it->off + 2 > it->len)
		return false;
	l = it->p[it->off + 1];
	if (l < 2 || it->off + l > it->len)
		return false;
	*type = it->p[it->off];
	*val = &it->p[it->off + 2];
	*vlen = (uint8_t)(l - 2);
	it->off += l;
	return true;
}

const uint8_t *
egw_radius_attr_find(const uint8_t *pkt, size_t len, uint8_t type, uint8_t *vlen)
{
	struct egw_radius_iter it;
	const uint8_t *v;
	uint8_t t, l;

	egw_radius_iter_init(&it, pkt, len);
	while (egw_radius_iter_next(&it, &t, &v, &l)) {
		if (t == type) {
			*vlen = l;
			return v;
		}
	}
	return NULL;
}

/* MD5 of up to four pieces. */
static bool
md5_parts(const void *a, size_t al, const void *b, size_t bl, const void *c, size_t cl,
	  const void *d, size_t dl, uint8_t out[16])
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	unsigned int olen = 0;
	bool ok;

	if (ctx == NULL)
		return false;
	ok = EVP_DigestInit_ex(ctx, EVP_md5(), NULL) == 1 && EVP_DigestUpdate(ctx, a, al) == 1 &&
	     (bl == 0 || EVP_DigestUpdate(ctx, b, bl) == 1) &&
	     (cl == 0 || EVP_DigestUpdate(ctx, c, cl) == 1) &&
	     (dl == 0 || EVP_DigestUpdate(ctx, d, dl) == 1) &&
	     EVP_DigestFinal_ex(ctx, out, &olen) == 1 && olen == 16;
	EVP_MD_CTX_free(ctx);
	return ok;
}

/* RFC 2865 5.2: c(1) = p1 ^ MD5(S + RA), c(i) = pi ^ MD5(S + c(i-1)) */
static int
password_xor(const uint8_t *in, size_t len, const uint8_t *secret, size_t slen,
	     const uint8_t auth[16], uint8_t *out, bool hide)
{
	uint8_t b[16], prev[16];
	size_t i, k;

	if (slen == 0 || len % 16 != 0 || len > EGW_RADIUS_PASSWORD_MAX)
		return -EINVAL;
	memcpy(prev, auth, 16);
	for (i = 0; i < len; i += 16) {
		if (!md5_parts(secret, slen, prev, 16, NULL, 0, NULL, 0, b))
			return -EIO;
		/* the next round hashes the hidden block */
		if (!hide)
			memcpy(prev, &in[i], 16);
		for (k = 0; k < 16; k++)
			out[i + k] = in[i + k] ^ b[k];
		if (hide)
			memcpy(prev, &out[i], 16);
	}
	OPENSSL_cleanse(b, sizeof(b));
	return (int)len;
}

int
egw_radius_password_hide(const uint8_t *pw, size_t pwlen, const uint8_t *secret, size_t slen,
			 const uint8_t auth[EGW_RADIUS_AUTH_LEN], uint8_t *out)
{
	uint8_t padded[EGW_RADIUS_PASSWORD_MAX];
	size_t n;
	int rc;

	if (pwlen > EGW_RADIUS_PASSWORD_MAX || (pw == NULL && pwlen != 0))
		return -EINVAL;
	/* padded with NULs to a multiple of 16, at least 16 */
	n = pwlen == 0 ? 16 : (pwlen + 15) / 16 * 16;
	memset(padded, 0, sizeof(padded));
	if (pwlen != 0)
		memcpy(padded, pw, pwlen);
	rc = password_xor(padded, n, secret, slen, auth, out, true);
	OPENSSL_cleanse(padded, sizeof(padded));
	return rc;
}

int
egw_radius_password_unhide(const uint8_t *hidden, size_t len, const uint8_t *secret, size_t slen,
			   const uint8_t auth[EGW_RADIUS_AUTH_LEN], uint8_t *out)
{
	return password_xor(hidden, len, secret, slen, auth, out, false);
}

/* Offset of the (single) Message-Authenticator value, 0 if none, -1 if bad
 * (not 16 bytes, or twice: RFC 3579 3.2 allows one). */
static long
msgauth_off(const uint8_t *pkt, size_t len)
{
	struct egw_radius_iter it;
	const uint8_t *v;
	uint8_t t, l;
	long off = 0;

	egw_radius_iter_init(&it, pkt, len);
	while (egw_radius_iter_next(&it, &t, &v, &l)) {
		if (t != EGW_RADIUS_A_MESSAGE_AUTHENTICATOR)
			continue;
		if (l != 16 || off != 0)
			return -1;
		off = v - pkt;
	}
	return off;
}

/* HMAC-MD5 over the packet with the authenticator field replaced by auth
 * and the Message-Authenticator value zeroed (RFC 3579 3.2). */
static bool
msgauth_compute(const uint8_t *pkt, size_t len, long maoff, const uint8_t auth[16],
		const uint8_t *secret, size_t slen, uint8_t out[16])
{
	static const uint8_t zero[16];
	unsigned int olen = 16;
	HMAC_CTX *h;
	bool ok;

	/* HMAC_* is deprecated in OpenSSL 3 in favour of EVP_MAC; both are
	 * in libcrypto 3.0, and the HMAC calls keep 1.1 builds working */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
	h = HMAC_CTX_new();
	if (h == NULL)
		return false;
	ok = HMAC_Init_ex(h, secret, (int)slen, EVP_md5(), NULL) == 1 &&
	     HMAC_Update(h, pkt, 4) == 1 && HMAC_Update(h, auth, 16) == 1 &&
	     HMAC_Update(h, pkt + EGW_RADIUS_HDR_LEN, (size_t)maoff - EGW_RADIUS_HDR_LEN) == 1 &&
	     HMAC_Update(h, zero, 16) == 1 &&
	     HMAC_Update(h, pkt + maoff + 16, len - (size_t)maoff - 16) == 1 &&
	     HMAC_Final(h, out, &olen) == 1 && olen == 16;
	HMAC_CTX_free(h);
#pragma GCC diagnostic pop
	return ok;
}

/* Requests whose authenticator is a hash with a zero authenticator
 * (RFC 2866 3, RFC 5176 3.1), as opposed to the Access-Request's random one. */
static bool
code_hashed_request(uint8_t code)
{
	return code == EGW_RADIUS_ACCT_REQUEST || code == EGW_RADIUS_DISCONNECT_REQUEST ||
	       code == EGW_RADIUS_COA_REQUEST;
}

int
egw_radius_finish(struct egw_radius_pkt *p, const uint8_t *secret, size_t slen,
		  const uint8_t *req_auth)
{
	static const uint8_t zero[16];
	uint8_t *b = p->buf, code = b[0], ma[16], a[16];
	const uint8_t *ma_auth;
	long maoff;

	if (slen == 0 || secret == NULL || p->len < EGW_RADIUS_HDR_LEN ||
	    p->len > EGW_RADIUS_PKT_MAX)
		return -EINVAL;
	b[2] = (uint8_t)(p->len >> 8);
	b[3] = (uint8_t)p->len;
	maoff = msgauth_off(b, p->len);
	if (maoff < 0)
		return -EINVAL;
	if (req_auth != NULL)
		ma_auth = req_auth; /* a response: over the request's authenticator */
	else if (code_hashed_request(code))
		ma_auth = zero; /* RFC 5176 3.3 (and FreeRADIUS for accounting) */
	else
		ma_auth = &b[4]; /* Access-Request: its own random authenticator */
	if (maoff > 0) {
		if (!msgauth_compute(b, p->len, maoff, ma_auth, secret, slen, ma))
			return -EIO;
		memcpy(&b[maoff], ma, 16);
	}
	if (req_auth == NULL && !code_hashed_request(code))
		return 0;
	if (!md5_parts(b, 4, req_auth != NULL ? req_auth : zero, 16, b + EGW_RADIUS_HDR_LEN,
		       p->len - EGW_RADIUS_HDR_LEN, secret, slen, a))
		return -EIO;
	memcpy(&b[4], a, 16);
	return 0;
}

enum egw_radius_err
egw_radius_verify(const uint8_t *pkt, size_t len, const uint8_t *secret, size_t slen,
		  const uint8_t *req_auth, bool require_ma)
{
	static const uint8_t zero[16];
	uint8_t a[16], ma[16];
	const uint8_t *ma_auth;
	long maoff;

	if (len < EGW_RADIUS_HDR_LEN || slen == 0)
		return EGW_RADIUS_E_SHORT;
	if (req_auth == NULL && !code_hashed_request(pkt[0]))
		return EGW_RADIUS_E_AUTH; /* an Access-Request proves nothing by itself */
	/* the authenticator first: it covers the Message-Authenticator too */
	if (!md5_parts(pkt, 4, req_auth != NULL ? req_auth : zero, 16, pkt + EGW_RADIUS_HDR_LEN,
		       len - EGW_RADIUS_HDR_LEN, secret, slen, a) ||
	    CRYPTO_memcmp(a, &pkt[4], 16) != 0)
		return EGW_RADIUS_E_AUTH;
	maoff = msgauth_off(pkt, len);
	if (maoff < 0)
		return EGW_RADIUS_E_MSGAUTH;
	if (maoff == 0)
		return require_ma ? EGW_RADIUS_E_NO_MSGAUTH : EGW_RADIUS_OK;
	ma_auth = req_auth != NULL ? req_auth : zero;
	if (!msgauth_compute(pkt, len, maoff, ma_auth, secret, slen, ma) ||
	    CRYPTO_memcmp(ma, &pkt[maoff], 16) != 0)
		return EGW_RADIUS_E_MSGAUTH;
	return EGW_RADIUS_OK;
}

/* Verify a received Access-Request's Message-Authenticator (tests, servers). */
enum egw_radius_err
radius_verify_access_request(const uint8_t *pkt, size_t len, const uint8_t *secret, size_t slen)
{
	uint8_t ma[16];
	long maoff = msgauth_off(pkt, len);

	if (maoff < 0)
		return EGW_RADIUS_E_MSGAUTH;
	if (maoff == 0)
		return EGW_RADIUS_E_NO_MSGAUTH;
	if (!msgauth_compute(pkt, len, maoff, &pkt[4], secret, slen, ma) ||
	    CRYPTO_memcmp(ma, &pkt[maoff], 16) != 0)
		return EGW_RADIUS_E_MSGAUTH;
	return EGW_RADIUS_OK;
}
