/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ESP commands (lib/esp):
 *   esp state-file <path> [create]
 *   esp state-prune
 *   esp sa add <spi> out|in aead <aead> key <hex> mode transport|tunnel
 *          [src <addr> dst <addr>] [esn on|off] [window <n>]
 *          [natt [sport <port>] [dport <port>]] [mtu <n>] [ttl <n>] [seq <n>]
 *          [lifetime packets <soft> <hard>] [lifetime bytes <soft> <hard>]
 *   esp sa del <spi> [in|out]
 *   esp sa replace out|in <old-spi> <new-spi>
 *   esp policy add out|in [pos <n>] src <prefix> dst <prefix>
 *          [proto tcp|udp|icmp|icmp6|<0-254>|any] protect <spi>|bypass|discard
 *   esp policy del out|in <id>
 *   esp policy default out|in bypass|discard|auto
 *   show esp sa [detail] | policy | stats
 * Each checks every argument before it changes anything; the library
 * checks the rest and changes nothing when it refuses. The tables have one
 * writer at a time: commands and the control path's egw_esp_service() run
 * under egw.ctrl_lock. Key material never appears in a message, and every
 * copy of it made here is wiped.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <cmdline_parse.h>
#include <cmdline_parse_string.h>

#include "cli.h"
#include "fwd.h"

#define ESP_MAX_WORDS 48
#define ESP_MTU_MAX 9000

struct esp_args {
	int n;
	char *w[ESP_MAX_WORDS];
};

static int
split(char *s, struct esp_args *a)
{
	a->n = egw_cli_split(s, a->w, ESP_MAX_WORDS);
	return a->n < 0 ? a->n : 0;
}

static int
parse_spi(const char *cmd, const char *s, uint32_t *spi)
{
	uint64_t v;

	if (egw_parse_num(s, 0, UINT32_MAX, &v) < 0) {
		egw_cli_fail("%s: spi '%s': a number 256..0xffffffff (decimal or 0x hex)", cmd, s);
		return -EINVAL;
	}
	if (v < 256) {
		egw_cli_fail("%s: spi %s: SPIs 0..255 are reserved (RFC 4303); use 256..0xffffffff",
			     cmd, s);
		return -EINVAL;
	}
	*spi = (uint32_t)v;
	return 0;
}

static int
parse_dir(const char *cmd, const char *s, enum egw_esp_dir *dir)
{
	if (strcmp(s, "out") == 0) {
		*dir = EGW_ESP_DIR_OUT;
	} else if (strcmp(s, "in") == 0) {
		*dir = EGW_ESP_DIR_IN;
	} else {
		egw_cli_fail("%s: direction '%s': out or in", cmd, s);
		return -EINVAL;
	}
	return 0;
}

static const char *
dir_name(enum egw_esp_dir d)
{
	return d == EGW_ESP_DIR_OUT ? "out" : "in";
}

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Key + salt in hex (optional 0x), exactly want bytes. Never echoes the
 * key; out is wiped by the caller. */
static int
parse_key(const char *s, enum egw_esp_aead aead, unsigned int want, uint8_t *out)
{
	size_t n, i;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	n = strlen(s);
	for (i = 0; i < n; i++) {
		if (hexval(s[i]) < 0) {
			egw_cli_fail("esp sa add: key: hex digit %zu is not one (0-9, a-f)", i + 1);
			return -EINVAL;
		}
	}
	if (n % 2 != 0) {
		egw_cli_fail("esp sa add: key: odd number of hex digits (%zu)", n);
		return -EINVAL;
	}
	if (n / 2 != want) {
		egw_cli_fail(
			"esp sa add: key: %zu bytes, %s needs %u (%u-byte key + 4-byte salt, %u "
			"hex digits)",
			n / 2, egw_esp_aead_name(aead), want, want - 4, 2 * want);
		return -EINVAL;
	}
	for (i = 0; i < want; i++)
		out[i] = (uint8_t)(hexval(s[2 * i]) << 4 | hexval(s[2 * i + 1]));
	return 0;
}

static int
parse_addr(const char *s, struct egw_esp_addr *a)
{
	memset(a, 0, sizeof(*a));
	if (inet_pton(AF_INET, s, a->a) == 1)
		a->family = AF_INET;
	else if (inet_pton(AF_INET6, s, a->a) == 1)
		a->family = AF_INET6;
	else
		return -EINVAL;
	return 0;
}

/* <addr>[/<len>]; a bare address is a host prefix; host bits are cleared. */
static int
parse_prefix(const char *cmd, const char *what, const char *s, struct egw_esp_prefix *p)
{
	char buf[INET6_ADDRSTRLEN + 8];
	const char *slash = strchr(s, '/');
	unsigned int max, i;
	uint64_t len;

	memset(p, 0, sizeof(*p));
	if (strlen(s) >= sizeof(buf))
		goto bad;
	strcpy(buf, s);
	if (slash != NULL)
		buf[slash - s] = '\0';
	if (parse_addr(buf, &p->addr) < 0)
		goto bad;
	max = p->addr.family == AF_INET ? 32 : 128;
	len = max;
	if (slash != NULL && egw_parse_u64(slash + 1, 0, max, &len) < 0) {
		egw_cli_fail("%s: %s '%s': prefix length 0..%u", cmd, what, s, max);
		return -EINVAL;
	}
	p->len = (uint8_t)len;
	for (i = 0; i < 16; i++) {
		if (i * 8 >= len)
			p->addr.a[i] = 0;
		else if (i * 8 + 8 > len)
			p->addr.a[i] &= (uint8_t)(0xff << (8 - (len - i * 8)));
	}
	return 0;
bad:
	egw_cli_fail("%s: %s '%s': an IPv4 or IPv6 address or prefix (addr/len)", cmd, what, s);
	return -EINVAL;
}

static const char *
family_name(uint8_t f)
{
	return f == AF_INET ? "IPv4" : "IPv6";
}

static const char *
addr_str(const struct egw_esp_addr *a, char *buf, size_t len)
{
	if (a->family == 0 || inet_ntop(a->family, a->a, buf, (socklen_t)len) == NULL)
		snprintf(buf, len, "-");
	return buf;
}

/* ---- esp state-file ------------------------------------------------------ */

static void
state_file(struct esp_args *a)
{
	char err[256] = "";
	int rc;

	bool create = a->n == 3 && strcmp(a->w[2], "create") == 0;

	if (a->n != 2 && !create) {
		egw_cli_fail("usage: esp state-file <path> [create]");
		return;
	}
	rc = egw_esp_state_file(a->w[1], create, err, sizeof(err));
	if (rc < 0) {
		if (err[0] != '\0')
			egw_cli_fail("esp state-file: %s", err);
		else
			egw_cli_fail("esp state-file %s: %s", a->w[1], strerror(-rc));
		return;
	}
	printf("esp: state file %s%s, %u keys\n", a->w[1], create ? " created" : "",
	       egw_esp_state_keys());
}

static void
state_prune(struct esp_args *a)
{
	char err[256] = "";
	int rc;

	if (a->n != 1) {
		egw_cli_fail("usage: esp state-prune");
		return;
	}
	rc = egw_esp_state_prune(err, sizeof(err));
	if (rc < 0) {
		egw_cli_fail("esp state-prune: %s", err[0] ? err : strerror(-rc));
		return;
	}
	printf("esp: %d keys no SA uses forgotten, %u kept\n", rc, egw_esp_state_keys());
}

/* ---- esp sa add ------------------------------------------------------------ */

static const struct {
	const char *name;
	enum egw_esp_aead aead;
} aeads[] = {
	{"aes-128-gcm", EGW_ESP_AES128_GCM},
	{"aes-256-gcm", EGW_ESP_AES256_GCM},
	{"chacha20-poly1305", EGW_ESP_CHACHA20_POLY1305},
};

enum sa_opt {
	O_SRC = 1 << 0,
	O_DST = 1 << 1,
	O_ESN = 1 << 2,
	O_WINDOW = 1 << 3,
	O_NATT = 1 << 4,
	O_SPORT = 1 << 5,
	O_DPORT = 1 << 6,
	O_MTU = 1 << 7,
	O_TTL = 1 << 8,
	O_SEQ = 1 << 9,
	O_LIFE_PKT = 1 << 10,
	O_LIFE_BYTES = 1 << 11,
};

/* One bounded number option: "<word> <n>". */
static int
num_opt(const char *word, const char *s, uint64_t min, uint64_t max, uint64_t *v)
{
	if (egw_parse_num(s, min, max, v) == 0)
		return 0;
	egw_cli_fail("esp sa add: %s '%s': %" PRIu64 "..%" PRIu64, word, s, min, max);
	return -EINVAL;
}

/* The options after "mode <m>"; words[i] is the first. */
static int
sa_options(struct esp_args *a, int i, struct egw_esp_sa_conf *c)
{
	unsigned int seen = 0;
	uint64_t v, soft, hard;

	while (i < a->n) {
		const char *w = a->w[i];
		unsigned int opt;
		int need; /* values the option takes */

		if (strcmp(w, "src") == 0) {
			opt = O_SRC, need = 1;
		} else if (strcmp(w, "dst") == 0) {
			opt = O_DST, need = 1;
		} else if (strcmp(w, "esn") == 0) {
			opt = O_ESN, need = 1;
		} else if (strcmp(w, "window") == 0) {
			opt = O_WINDOW, need = 1;
		} else if (strcmp(w, "natt") == 0) {
			opt = O_NATT, need = 0;
		} else if (strcmp(w, "sport") == 0 || strcmp(w, "dport") == 0) {
			if (!(seen & O_NATT)) {
				egw_cli_fail("esp sa add: '%s' belongs after 'natt'", w);
				return -EINVAL;
			}
			opt = w[0] == 's' ? O_SPORT : O_DPORT, need = 1;
		} else if (strcmp(w, "mtu") == 0) {
			opt = O_MTU, need = 1;
		} else if (strcmp(w, "ttl") == 0) {
			opt = O_TTL, need = 1;
		} else if (strcmp(w, "seq") == 0) {
			opt = O_SEQ, need = 1;
		} else if (strcmp(w, "lifetime") == 0) {
			if (i + 1 < a->n && strcmp(a->w[i + 1], "packets") == 0) {
				opt = O_LIFE_PKT;
			} else if (i + 1 < a->n && strcmp(a->w[i + 1], "bytes") == 0) {
				opt = O_LIFE_BYTES;
			} else {
				egw_cli_fail("esp sa add: 'lifetime packets|bytes <soft> <hard>' "
					     "expected");
				return -EINVAL;
			}
			need = 3;
		} else {
			egw_cli_fail(
				"esp sa add: unknown '%s' (src, dst, esn, window, natt, mtu, ttl, "
				"seq, lifetime)",
				w);
			return -EINVAL;
		}
		if (seen & opt) {
			egw_cli_fail("esp sa add: '%s%s%s' given twice", w, need == 3 ? " " : "",
				     need == 3 ? a->w[i + 1] : "");
			return -EINVAL;
		}
		seen |= opt;
		if (i + need >= a->n) {
			egw_cli_fail("esp sa add: '%s' needs %s", w,
				     need == 3 ? "<soft> <hard>" : "a value");
			return -EINVAL;
		}
		switch (opt) {
		case O_SRC:
		case O_DST:
			if (parse_addr(a->w[i + 1], opt == O_SRC ? &c->tun_src : &c->tun_dst) < 0) {
				egw_cli_fail("esp sa add: %s '%s': not an IPv4 or IPv6 address", w,
					     a->w[i + 1]);
				return -EINVAL;
			}
			break;
		case O_ESN:
			if (strcmp(a->w[i + 1], "on") != 0 && strcmp(a->w[i + 1], "off") != 0) {
				egw_cli_fail("esp sa add: esn '%s': on or off", a->w[i + 1]);
				return -EINVAL;
			}
			c->esn = strcmp(a->w[i + 1], "on") == 0;
			break;
		case O_WINDOW:
			if (num_opt(w, a->w[i + 1], EGW_ESP_WINDOW_MIN, EGW_ESP_WINDOW_MAX, &v) < 0)
				return -EINVAL;
			c->window = (uint32_t)v;
			break;
		case O_NATT: c->natt = true; break;
		case O_SPORT:
		case O_DPORT:
			if (num_opt(w, a->w[i + 1], 1, UINT16_MAX, &v) < 0)
				return -EINVAL;
			if (opt == O_SPORT)
				c->natt_sport = (uint16_t)v;
			else
				c->natt_dport = (uint16_t)v;
			break;
		case O_MTU:
			if (num_opt(w, a->w[i + 1], EGW_ESP_MTU_MIN, ESP_MTU_MAX, &v) < 0)
				return -EINVAL;
			c->mtu = (uint16_t)v;
			break;
		case O_TTL:
			if (num_opt(w, a->w[i + 1], 1, UINT8_MAX, &v) < 0)
				return -EINVAL;
			c->ttl = (uint8_t)v;
			break;
		case O_SEQ:
			if (num_opt(w, a->w[i + 1], 0, UINT64_MAX, &v) < 0)
				return -EINVAL;
			c->seq_start = v;
			break;
		default: /* lifetime packets|bytes <soft> <hard> */
			if (egw_parse_num(a->w[i + 2], 0, UINT64_MAX, &soft) < 0 ||
			    egw_parse_num(a->w[i + 3], 0, UINT64_MAX, &hard) < 0) {
				egw_cli_fail("esp sa add: lifetime %s '%s %s': two numbers <soft> "
					     "<hard> (0 = none)",
					     a->w[i + 1], a->w[i + 2], a->w[i + 3]);
				return -EINVAL;
			}
			if (hard != 0 && soft > hard) {
				egw_cli_fail("esp sa add: lifetime %s: soft limit %" PRIu64
					     " above the hard limit %" PRIu64,
					     a->w[i + 1], soft, hard);
				return -EINVAL;
			}
			if (opt == O_LIFE_PKT) {
				c->life_packets.soft = soft;
				c->life_packets.hard = hard;
			} else {
				c->life_bytes.soft = soft;
				c->life_bytes.hard = hard;
			}
			break;
		}
		i += 1 + need;
	}
	if (c->mode == EGW_ESP_MODE_TUNNEL) {
		if ((seen & (O_SRC | O_DST)) != (O_SRC | O_DST)) {
			egw_cli_fail(
				"esp sa add: mode tunnel needs 'src <addr> dst <addr>' (the outer "
				"addresses)");
			return -EINVAL;
		}
		if (c->tun_src.family != c->tun_dst.family) {
			egw_cli_fail("esp sa add: tunnel src is %s but dst is %s: both ends of a "
				     "tunnel are of one family",
				     family_name(c->tun_src.family),
				     family_name(c->tun_dst.family));
			return -EINVAL;
		}
	} else if (seen & (O_SRC | O_DST)) {
		egw_cli_fail("esp sa add: mode transport takes no src/dst (the packet's own "
			     "addresses are used)");
		return -EINVAL;
	}
	return 0;
}

static void
sa_add(struct esp_args *a)
{
	struct egw_esp_sa_conf c;
	unsigned int k;
	char err[256] = "";
	int rc;

	memset(&c, 0, sizeof(c));
	/* esp sa add <spi> <dir> aead <a> key <hex> mode <m> [options] */
	if (a->n < 10 || strcmp(a->w[4], "aead") != 0 || strcmp(a->w[6], "key") != 0 ||
	    strcmp(a->w[8], "mode") != 0) {
		egw_cli_fail("usage: esp sa add <spi> out|in aead <aead> key <hex> mode "
			     "transport|tunnel [options] (help esp)");
		return;
	}
	if (parse_spi("esp sa add", a->w[2], &c.spi) < 0 ||
	    parse_dir("esp sa add", a->w[3], &c.dir) < 0)
		return;
	for (k = 0; k < RTE_DIM(aeads); k++)
		if (strcmp(a->w[5], aeads[k].name) == 0)
			break;
	if (k == RTE_DIM(aeads)) {
		egw_cli_fail("esp sa add: aead '%s': aes-128-gcm, aes-256-gcm or chacha20-poly1305",
			     a->w[5]);
		return;
	}
	c.aead = aeads[k].aead;
	if (strcmp(a->w[9], "transport") == 0) {
		c.mode = EGW_ESP_MODE_TRANSPORT;
	} else if (strcmp(a->w[9], "tunnel") == 0) {
		c.mode = EGW_ESP_MODE_TUNNEL;
	} else {
		egw_cli_fail("esp sa add: mode '%s': transport or tunnel", a->w[9]);
		return;
	}
	c.key_len = (uint8_t)egw_esp_aead_key_len(c.aead);
	if (c.key_len == 0 || c.key_len > EGW_ESP_KEY_MAX) {
		egw_cli_fail("esp sa add: %s: unsupported by lib/esp", a->w[5]);
		return;
	}
	if (parse_key(a->w[7], c.aead, c.key_len, c.key) < 0 || sa_options(a, 10, &c) < 0)
		goto out;
	rc = egw_esp_sa_add(&c, err, sizeof(err));
	if (rc < 0) {
		egw_cli_fail("esp sa add 0x%08" PRIx32 " %s: %s", c.spi, dir_name(c.dir),
			     err[0] ? err : strerror(-rc));
		goto out;
	}
	/* steered to edgegw on a NIC shared with the kernel: refused (map
	 * full), the SA goes again */
	if (egw_xdp_hook_esp_sa(&c, true, err, sizeof(err)) < 0) {
		char e2[256];

		egw_esp_sa_del(c.spi, c.dir, e2, sizeof(e2));
		egw_cli_fail("esp sa add 0x%08" PRIx32 " %s: %s: the SA was not added", c.spi,
			     dir_name(c.dir), err);
		goto out;
	}
	printf("esp: SA 0x%08" PRIx32 " %s added (%s, %s)\n", c.spi, dir_name(c.dir),
	       c.mode == EGW_ESP_MODE_TUNNEL ? "tunnel" : "transport", egw_esp_aead_name(c.aead));
out:
	explicit_bzero(&c, sizeof(c));
}

/* ---- esp sa del -------------------------------------------------------------- */

static void
sa_del(struct esp_args *a)
{
	struct egw_esp_sa_info info;
	enum egw_esp_dir dir;
	char err[256] = "";
	uint32_t spi;
	int rc;

	if (a->n != 3 && a->n != 4) {
		egw_cli_fail("usage: esp sa del <spi> [in|out]");
		return;
	}
	if (parse_spi("esp sa del", a->w[2], &spi) < 0)
		return;
	if (a->n == 4) {
		if (parse_dir("esp sa del", a->w[3], &dir) < 0)
			return;
	} else {
		bool out = egw_esp_sa_info(spi, EGW_ESP_DIR_OUT, &info) == 0;
		bool in = egw_esp_sa_info(spi, EGW_ESP_DIR_IN, &info) == 0;

		if (out && in) {
			egw_cli_fail("esp sa del: SPI 0x%08" PRIx32
				     " exists in both directions: say 'in' or 'out'",
				     spi);
			return;
		}
		if (!out && !in) {
			egw_cli_fail("esp sa del: no SA with SPI 0x%08" PRIx32, spi);
			return;
		}
		dir = out ? EGW_ESP_DIR_OUT : EGW_ESP_DIR_IN;
	}
	if (egw_esp_sa_info(spi, dir, &info) != 0)
		info.conf.dir = EGW_ESP_DIR_OUT; /* not there: nothing to unsteer */
	rc = egw_esp_sa_del(spi, dir, err, sizeof(err));
	if (rc == 0 && egw_xdp_hook_esp_sa(&info.conf, false, err, sizeof(err)) < 0) {
		egw_cli_fail("esp sa del 0x%08" PRIx32 " %s: deleted, but %s", spi, dir_name(dir),
			     err);
		return;
	}
	if (rc == -ENOENT) {
		egw_cli_fail("esp sa del: no %s SA with SPI 0x%08" PRIx32, dir_name(dir), spi);
		return;
	}
	if (rc < 0) {
		egw_cli_fail("esp sa del 0x%08" PRIx32 " %s: %s", spi, dir_name(dir),
			     err[0] ? err : strerror(-rc));
		return;
	}
	printf("esp: SA 0x%08" PRIx32 " %s deleted\n", spi, dir_name(dir));
}

/* ---- esp policy add|del -------------------------------------------------------- */

static void
policy_add(struct esp_args *a)
{
	static const char *const cmd = "esp policy add";
	struct egw_esp_policy p;
	bool have_src = false, have_dst = false, have_action = false, have_proto = false;
	const char *proto_name = NULL; /* icmp or icmp6 by name */
	char err[256] = "";
	int i, pos = -1, rc;
	uint64_t v;

	memset(&p, 0, sizeof(p));
	p.proto = -1;
	if (a->n < 3) {
		egw_cli_fail("usage: esp policy add out|in [pos <n>] src <prefix> dst <prefix> "
			     "[proto <p>] protect <spi>|bypass|discard");
		return;
	}
	if (parse_dir(cmd, a->w[2], &p.dir) < 0)
		return;
	for (i = 3; i < a->n; i++) {
		const char *w = a->w[i];
		bool takes = strcmp(w, "bypass") != 0 && strcmp(w, "discard") != 0;

		if (have_action) {
			egw_cli_fail("%s: '%s' after the action: the action (protect, bypass, "
				     "discard) comes last",
				     cmd, w);
			return;
		}
		if (takes && i + 1 >= a->n) {
			egw_cli_fail("%s: '%s' needs a value", cmd, w);
			return;
		}
		if (strcmp(w, "pos") == 0) {
			if (pos >= 0 || egw_parse_u64(a->w[i + 1], 0, EGW_ESP_MAX_POLICY, &v) < 0) {
				egw_cli_fail("%s: pos '%s': 0..%u, once", cmd, a->w[i + 1],
					     EGW_ESP_MAX_POLICY);
				return;
			}
			pos = (int)v;
		} else if (strcmp(w, "src") == 0 || strcmp(w, "dst") == 0) {
			bool *have = w[0] == 's' ? &have_src : &have_dst;

			if (*have) {
				egw_cli_fail("%s: '%s' given twice", cmd, w);
				return;
			}
			if (parse_prefix(cmd, w, a->w[i + 1], w[0] == 's' ? &p.src : &p.dst) < 0)
				return;
			*have = true;
		} else if (strcmp(w, "proto") == 0) {
			const char *s = a->w[i + 1];

			if (have_proto) {
				egw_cli_fail("%s: 'proto' given twice", cmd);
				return;
			}
			have_proto = true;
			if (strcmp(s, "tcp") == 0)
				p.proto = IPPROTO_TCP;
			else if (strcmp(s, "udp") == 0)
				p.proto = IPPROTO_UDP;
			else if (strcmp(s, "icmp") == 0)
				p.proto = IPPROTO_ICMP, proto_name = s;
			else if (strcmp(s, "icmp6") == 0)
				p.proto = IPPROTO_ICMPV6, proto_name = s;
			else if (strcmp(s, "any") == 0)
				p.proto = -1;
			else if (egw_parse_u64(s, 0, 254, &v) == 0)
				p.proto = (int16_t)v;
			else {
				egw_cli_fail("%s: proto '%s': tcp, udp, icmp, icmp6, any or 0..254 "
					     "(255 is reserved)",
					     cmd, s);
				return;
			}
		} else if (strcmp(w, "protect") == 0) {
			if (parse_spi(cmd, a->w[i + 1], &p.spi) < 0)
				return;
			p.action = EGW_ESP_PROTECT;
			have_action = true;
		} else if (strcmp(w, "bypass") == 0) {
			p.action = EGW_ESP_BYPASS;
			have_action = true;
		} else if (strcmp(w, "discard") == 0) {
			p.action = EGW_ESP_DISCARD;
			have_action = true;
		} else {
			egw_cli_fail("%s: unknown '%s' (pos, src, dst, proto, protect, bypass, "
				     "discard)",
				     cmd, w);
			return;
		}
		if (takes)
			i++;
	}
	if (!have_src || !have_dst) {
		egw_cli_fail("%s: 'src <prefix>' and 'dst <prefix>' are needed", cmd);
		return;
	}
	if (!have_action) {
		egw_cli_fail("%s: an action is needed: protect <spi>, bypass or discard", cmd);
		return;
	}
	if (p.src.addr.family != p.dst.addr.family) {
		egw_cli_fail("%s: src is %s but dst is %s: a rule matches one family", cmd,
			     family_name(p.src.addr.family), family_name(p.dst.addr.family));
		return;
	}
	p.family = p.src.addr.family;
	if (proto_name != NULL && (p.proto == IPPROTO_ICMP) != (p.family == AF_INET)) {
		egw_cli_fail("%s: proto %s does not go with %s prefixes (icmp is IPv4's, icmp6 "
			     "IPv6's)",
			     cmd, proto_name, family_name(p.family));
		return;
	}
	rc = egw_esp_policy_add(&p, pos, err, sizeof(err));
	if (rc < 0) {
		egw_cli_fail("%s: %s", cmd, err[0] ? err : strerror(-rc));
		return;
	}
	printf("esp: %s policy %d added\n", dir_name(p.dir), rc);
}

static void
policy_del(struct esp_args *a)
{
	enum egw_esp_dir dir;
	uint64_t id;
	int rc;

	if (a->n != 4) {
		egw_cli_fail("usage: esp policy del out|in <id>");
		return;
	}
	if (parse_dir("esp policy del", a->w[2], &dir) < 0)
		return;
	if (egw_parse_u64(a->w[3], 1, UINT32_MAX, &id) < 0) {
		egw_cli_fail("esp policy del: id '%s': a policy id (show esp policy)", a->w[3]);
		return;
	}
	rc = egw_esp_policy_del(dir, (uint32_t)id);
	if (rc == -ENOENT) {
		egw_cli_fail("esp policy del: no %s policy with id %" PRIu64, dir_name(dir), id);
		return;
	}
	if (rc < 0) {
		egw_cli_fail("esp policy del %s %" PRIu64 ": %s", dir_name(dir), id, strerror(-rc));
		return;
	}
	printf("esp: %s policy %" PRIu64 " deleted\n", dir_name(dir), id);
}

static void
policy_default(struct esp_args *a)
{
	static const char *const names[] = {"auto", "bypass", "discard"};
	enum egw_esp_policy_default def;
	enum egw_esp_dir dir;
	char err[256] = "";
	int rc;

	if (a->n != 4) {
		egw_cli_fail("usage: esp policy default out|in bypass|discard|auto");
		return;
	}
	if (parse_dir("esp policy default", a->w[2], &dir) < 0)
		return;
	for (def = EGW_ESP_DEFAULT_AUTO; def <= EGW_ESP_DEFAULT_DISCARD; def++)
		if (strcmp(a->w[3], names[def]) == 0)
			break;
	if (def > EGW_ESP_DEFAULT_DISCARD) {
		egw_cli_fail("esp policy default: '%s': bypass, discard or auto", a->w[3]);
		return;
	}
	rc = egw_esp_policy_default(dir, def, err, sizeof(err));
	if (rc < 0) {
		egw_cli_fail("esp policy default: %s", err[0] ? err : strerror(-rc));
		return;
	}
	printf("esp: %s default %s\n", dir_name(dir), names[def]);
}

static void
sa_replace(struct esp_args *a)
{
	const char *cmd = "esp sa replace";
	enum egw_esp_dir dir;
	uint32_t old_spi, new_spi;
	char err[256] = "";
	int rc;

	if (a->n != 5) {
		egw_cli_fail("usage: esp sa replace out|in <old-spi> <new-spi>");
		return;
	}
	if (parse_dir(cmd, a->w[2], &dir) < 0 || parse_spi(cmd, a->w[3], &old_spi) < 0 ||
	    parse_spi(cmd, a->w[4], &new_spi) < 0)
		return;
	rc = egw_esp_sa_replace(dir, old_spi, new_spi, err, sizeof(err));
	if (rc < 0) {
		egw_cli_fail("%s: %s", cmd, err[0] ? err : strerror(-rc));
		return;
	}
	printf("esp: %d %s polic%s now protect with 0x%08" PRIx32 "%s\n", rc, dir_name(dir),
	       rc == 1 ? "y" : "ies", new_spi,
	       dir == EGW_ESP_DIR_IN ? " (and accept the old SA until it is deleted)" : "");
}

/* ---- dispatch -------------------------------------------------------------------- */

struct esp_res {
	cmdline_fixed_string_t w0;
	cmdline_fixed_string_t w1;
	cmdline_multi_string_t rest;
};

static void
esp_run(char *line)
{
	struct esp_args a;

	if (split(line, &a) < 0 || a.n == 0) {
		egw_cli_fail("esp: see 'help esp'%s", a.n != 0 ? " (too many words)" : "");
		return;
	}
	if (strcmp(a.w[0], "state-file") == 0)
		state_file(&a);
	else if (strcmp(a.w[0], "state-prune") == 0)
		state_prune(&a);
	else if (a.n >= 2 && strcmp(a.w[0], "sa") == 0 && strcmp(a.w[1], "replace") == 0)
		sa_replace(&a);
	else if (a.n >= 2 && strcmp(a.w[0], "policy") == 0 && strcmp(a.w[1], "default") == 0)
		policy_default(&a);
	else if (a.n >= 2 && strcmp(a.w[0], "sa") == 0 && strcmp(a.w[1], "add") == 0)
		sa_add(&a);
	else if (a.n >= 2 && strcmp(a.w[0], "sa") == 0 && strcmp(a.w[1], "del") == 0)
		sa_del(&a);
	else if (a.n >= 2 && strcmp(a.w[0], "policy") == 0 && strcmp(a.w[1], "add") == 0)
		policy_add(&a);
	else if (a.n >= 2 && strcmp(a.w[0], "policy") == 0 && strcmp(a.w[1], "del") == 0)
		policy_del(&a);
	else if (strcmp(a.w[0], "sa") == 0 || strcmp(a.w[0], "policy") == 0)
		egw_cli_fail("esp %s: 'add', 'del' or '%s' expected%s%s%s", a.w[0],
			     strcmp(a.w[0], "sa") == 0 ? "replace" : "default",
			     a.n >= 2 ? ", got '" : "", a.n >= 2 ? a.w[1] : "",
			     a.n >= 2 ? "'" : "");
	else
		egw_cli_fail("esp: unknown '%s' (state-file, state-prune, sa add|del|replace, "
			     "policy add|del|default)",
			     a.w[0]);
}

static void
cmd_esp(void *pr, struct cmdline *cl __rte_unused, void *data __rte_unused)
{
	struct esp_res *res = pr;
	char line[sizeof(res->rest)];

	snprintf(line, sizeof(line), "%s", res->rest);
	/* the line may carry a key: neither copy outlives the command */
	explicit_bzero(res->rest, sizeof(res->rest));
	if (strstr(line, "key") != NULL)
		egw_cli_secret();
	rte_spinlock_lock(&egw.ctrl_lock);
	if (!egw.esp)
		egw_cli_fail("esp: not available (see the warning at start-up)");
	else
		esp_run(line);
	egw_esp_stage_update();
	rte_spinlock_unlock(&egw.ctrl_lock);
	explicit_bzero(line, sizeof(line));
}

/* ---- show esp ------------------------------------------------------------------------ */

static int
show_sa(const struct egw_esp_sa_info *in, void *arg)
{
	const struct egw_esp_sa_conf *c = &in->conf;
	bool detail = arg != NULL;
	char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN], natt[16];
	char ends[2 * INET6_ADDRSTRLEN + 8];
	uint64_t drops = 0;
	unsigned int r;

	for (r = 0; r < EGW_ESP_DROP_MAX; r++)
		drops += in->stats.drop[r];
	if (c->natt)
		snprintf(natt, sizeof(natt), "%u/%u",
			 c->natt_sport != 0 ? c->natt_sport : EGW_ESP_NATT_PORT,
			 c->natt_dport != 0 ? c->natt_dport : EGW_ESP_NATT_PORT);
	else
		snprintf(natt, sizeof(natt), "off");
	if (c->mode == EGW_ESP_MODE_TUNNEL)
		snprintf(ends, sizeof(ends), "%s -> %s", addr_str(&c->tun_src, src, sizeof(src)),
			 addr_str(&c->tun_dst, dst, sizeof(dst)));
	else
		snprintf(ends, sizeof(ends), "-");
	printf("  spi 0x%08" PRIx32 " %-3s %-9s %-17s %s esn %s natt %s packets %" PRIu64
	       " bytes %" PRIu64 " drops %" PRIu64 "%s%s\n",
	       c->spi, dir_name(c->dir), c->mode == EGW_ESP_MODE_TUNNEL ? "tunnel" : "transport",
	       egw_esp_aead_name(c->aead), ends, c->esn ? "on" : "off", natt, in->stats.packets,
	       in->stats.bytes, drops, in->hard_expired ? " HARD-EXPIRED" : "",
	       in->soft_expired && !in->hard_expired ? " soft-expired" : "");
	if (!detail)
		return 0;
	if (c->dir == EGW_ESP_DIR_OUT)
		printf("      seq next %" PRIu64 " persisted up to %" PRIu64 " mtu %u ttl %u\n",
		       in->seq, in->seq_limit, c->mtu != 0 ? c->mtu : EGW_ESP_MTU_DEF,
		       c->ttl != 0 ? c->ttl : 64);
	else
		printf("      seq top %" PRIu64 " window %u\n", in->seq,
		       c->window != 0 ? c->window : EGW_ESP_WINDOW_DEF);
	printf("      lifetime packets %" PRIu64 " used, soft %" PRIu64 " hard %" PRIu64
	       "; bytes %" PRIu64 " used, soft %" PRIu64 " hard %" PRIu64 " (0 = none)\n",
	       in->life_packets, c->life_packets.soft, c->life_packets.hard, in->life_bytes,
	       c->life_bytes.soft, c->life_bytes.hard);
	for (r = 0; r < EGW_ESP_DROP_MAX; r++)
		if (in->stats.drop[r] != 0)
			printf("      drop %-20s %" PRIu64 "\n", egw_esp_drop_name(r),
			       in->stats.drop[r]);
	return 0;
}

static const char *
action_str(const struct egw_esp_policy *p, char *buf, size_t len)
{
	switch (p->action) {
	case EGW_ESP_PROTECT: snprintf(buf, len, "protect 0x%08" PRIx32, p->spi); break;
	case EGW_ESP_DISCARD: snprintf(buf, len, "discard"); break;
	default: snprintf(buf, len, "bypass"); break;
	}
	return buf;
}

struct policy_walk {
	unsigned int pos;
};

static int
show_policy(const struct egw_esp_policy *p, uint64_t hits, void *arg)
{
	struct policy_walk *pw = arg;
	char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN], proto[8], act[24];

	if (p->proto < 0)
		snprintf(proto, sizeof(proto), "any");
	else if (p->proto == IPPROTO_TCP)
		snprintf(proto, sizeof(proto), "tcp");
	else if (p->proto == IPPROTO_UDP)
		snprintf(proto, sizeof(proto), "udp");
	else if (p->proto == IPPROTO_ICMP && p->family == AF_INET)
		snprintf(proto, sizeof(proto), "icmp");
	else if (p->proto == IPPROTO_ICMPV6 && p->family == AF_INET6)
		snprintf(proto, sizeof(proto), "icmp6");
	else
		snprintf(proto, sizeof(proto), "%d", p->proto);
	printf("  %-3s pos %-4u id %-5" PRIu32 " src %s/%u dst %s/%u proto %s %s hits %" PRIu64
	       "\n",
	       dir_name(p->dir), pw->pos++, p->id, addr_str(&p->src.addr, src, sizeof(src)),
	       p->src.len, addr_str(&p->dst.addr, dst, sizeof(dst)), p->dst.len, proto,
	       action_str(p, act, sizeof(act)), hits);
	return 0;
}

static void
show_stats(void)
{
	struct egw_esp_ctx_stats s;
	unsigned int r;
	uint16_t i;

	egw_esp_stats(&s);
	printf("  ESP totals (all workers)\n");
	printf("  out: packets %-12" PRIu64 " bytes %-14" PRIu64 " segments %-10" PRIu64
	       " fragments %-8" PRIu64 " icmp too-big %" PRIu64 " (not sent, over 1000/s: %" PRIu64
	       ")\n",
	       s.out_packets, s.out_bytes, s.segments, s.fragments, s.icmp, s.icmp_limited);
	printf("  in:  packets %-12" PRIu64 " bytes %-14" PRIu64 "\n", s.in_packets, s.in_bytes);
	printf("  bypass (in clear by policy or no match): %" PRIu64 "\n", s.bypass);
	for (i = 0; i < egw.nb_workers; i++) {
		const struct egw_esp_ctx *c = egw_esp_stage_ctx(i);
		struct egw_esp_ctx_stats one;

		if (c == NULL)
			continue;
		egw_esp_ctx_stats(c, &one);
		printf("  worker lcore %u (%s): out %" PRIu64 " in %" PRIu64 "\n",
		       egw.workers[i]->lcore, egw_esp_ctx_arch(c), one.out_packets, one.in_packets);
	}
	printf("  drops by reason:\n");
	for (r = 0; r < EGW_ESP_DROP_MAX; r++)
		printf("    %-22s %-10" PRIu64 " %s\n", egw_esp_drop_name(r), s.drop[r],
		       egw_esp_drop_desc(r));
}

static void
cmd_show_esp(void *pr, struct cmdline *cl __rte_unused, void *data)
{
	struct esp_res *res = pr;
	char line[sizeof(res->rest)];
	struct policy_walk pw;
	struct esp_args a;

	if (data == NULL) {
		egw_cli_fail("show esp: sa [detail], policy or stats");
		return;
	}
	snprintf(line, sizeof(line), "%s", res->rest);
	if (split(line, &a) < 0 || a.n == 0 || a.n > 2 ||
	    (a.n == 2 && (strcmp(a.w[0], "sa") != 0 || strcmp(a.w[1], "detail") != 0)) ||
	    (strcmp(a.w[0], "sa") != 0 && strcmp(a.w[0], "policy") != 0 &&
	     strcmp(a.w[0], "stats") != 0)) {
		egw_cli_fail("show esp: '%s': sa [detail], policy or stats", res->rest);
		return;
	}
	rte_spinlock_lock(&egw.ctrl_lock);
	if (!egw.esp) {
		egw_cli_fail("show esp: ESP not available");
	} else if (strcmp(a.w[0], "sa") == 0) {
		printf("  %u outbound, %u inbound SAs\n", egw_esp_sa_count(EGW_ESP_DIR_OUT),
		       egw_esp_sa_count(EGW_ESP_DIR_IN));
		egw_esp_sa_walk(show_sa, a.n == 2 ? (void *)1 : NULL);
	} else if (strcmp(a.w[0], "policy") == 0) {
		static const char *const defs[] = {"auto", "bypass", "discard"};
		enum egw_esp_dir d;

		for (d = EGW_ESP_DIR_OUT; d <= EGW_ESP_DIR_IN; d++) {
			enum egw_esp_policy_default def = egw_esp_policy_default_get(d);

			printf("  %-3s default %s: no match is %s\n", dir_name(d), defs[def],
			       !egw_esp_policy_active(d)       ? "passed in clear (no policy)"
			       : def == EGW_ESP_DEFAULT_BYPASS ? "passed in clear"
							       : "discarded (esp_policy_default)");
			pw.pos = 0;
			egw_esp_policy_walk(d, show_policy, &pw);
		}
	} else {
		show_stats();
	}
	rte_spinlock_unlock(&egw.ctrl_lock);
}

static cmdline_parse_token_string_t t_esp0 = TOKEN_STRING_INITIALIZER(struct esp_res, w0, "esp");
static cmdline_parse_token_string_t t_show0 = TOKEN_STRING_INITIALIZER(struct esp_res, w0, "show");
static cmdline_parse_token_string_t t_esp1 = TOKEN_STRING_INITIALIZER(struct esp_res, w1, "esp");
static cmdline_parse_token_string_t t_rest =
	TOKEN_STRING_INITIALIZER(struct esp_res, rest, TOKEN_STRING_MULTI);

cmdline_parse_inst_t egw_cli_esp = {
	.f = cmd_esp,
	.help_str = "esp state-file|state-prune|sa|policy ...: ESP security associations and "
		    "policies (help esp)",
	.tokens = {(void *)&t_esp0, (void *)&t_rest, NULL},
};

cmdline_parse_inst_t egw_cli_show_esp = {
	.f = cmd_show_esp,
	.help_str = "show esp sa [detail]|policy|stats",
	.tokens = {(void *)&t_show0, (void *)&t_esp1, NULL},
};

cmdline_parse_inst_t egw_cli_show_esp_what = {
	.f = cmd_show_esp,
	.data = (void *)1,
	.help_str = "show esp sa [detail]|policy|stats",
	.tokens = {(void *)&t_show0, (void *)&t_esp1, (void *)&t_rest, NULL},
};
