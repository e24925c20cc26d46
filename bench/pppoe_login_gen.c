/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A PPPoE login generator for set-up rate benchmarks: N subscribers on one
 * AF_PACKET socket, one thread, each a small state machine (PADI, PADR,
 * LCP, PAP, IPCP), at most --inflight of them between their first PADI and
 * IPCP opened. It stands in for the Python clients, whose one interpreter
 * (and one reader thread for every frame) cap the rate well below what
 * edgegw and a RADIUS server do (bench/radius_auth_rate.py).
 *
 * Client i has the MAC 02:<b4>:<b3>:<b2>:<b1>:<b0> of base + i, the
 * Host-Uniq i, and logs in as the user <prefix><i % users> ("bench0"...). A step
 * unanswered for 1 s is sent again (the PADI with it, as a new attempt).
 * The AC's LCP and IPCP Configure-Requests are acked as they come; its
 * IPv6CP requests are Protocol-Rejected; Echo-Requests answered.
 *
 * Output, one line: "bound B of N in T s (R/s); 99% in T99 s (R99/s);
 * first-PADI-to-bound median M ms, p99 P ms; resent S" (T from the first
 * PADI to the last IPCP opened; T99 to the one that made 99% of N). Exit
 * status 0 when all were bound.
 *
 * Usage: pppoe_login_gen IFNAME N [--base HEX] [--inflight K] [--user PREFIX]
 *        [--users U] [--password PW] [--timeout S]
 * (root: a raw socket). With EGW_GEN_DEBUG set in the environment, each step
 * sent again is reported on stderr. Data path frames are not sent: the sessions stay
 * up until the AC clears them.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define ETH_DISC 0x8863
#define ETH_SESS 0x8864
#define PADI 0x09
#define PADO 0x07
#define PADR 0x19
#define PADS 0x65
#define PADT 0xa7
#define TAG_SERVICE 0x0101
#define TAG_HOST_UNIQ 0x0103
#define TAG_COOKIE 0x0104
#define PPP_LCP 0xc021
#define PPP_PAP 0xc023
#define PPP_IPCP 0x8021
#define PPP_IPV6CP 0x8057
#define CONF_REQ 1
#define CONF_ACK 2
#define CONF_NAK 3
#define CONF_REJ 4
#define PROTO_REJ 8
#define ECHO_REQ 9
#define ECHO_REP 10
#define RESEND_MS 1000

enum st { ST_IDLE, ST_PADI, ST_PADR, ST_LCP, ST_PAP, ST_IPCP, ST_BOUND };

struct cl {
	enum st st;
	uint8_t mac[6];
	uint8_t ac[6];
	uint16_t sid;
	uint8_t cookie[64];
	uint8_t cookie_len;
	bool lcp_ours, lcp_theirs, ipcp_ours, ipcp_theirs;
	uint8_t id;     /* of our last Configure-Request or PAP request */
	uint8_t rej_id; /* of our Protocol-Rejects */
	uint32_t ip;    /* network order; 0 until the AC names one */
	uint64_t t_start, t_tx, t_bound;
};

static int fd;
static struct cl *cls;
static unsigned int nb, users = 1000, resent;
static const char *user_prefix = "bench", *password = "bench-pw";
static struct sockaddr_ll to;

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static size_t
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
	return 2;
}

static uint16_t
get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void
xmit(const uint8_t *f, size_t len)
{
	if (len < 60)
		len = 60; /* the rest is zero: the callers' buffers are */
	if (sendto(fd, f, len, 0, (const struct sockaddr *)&to, sizeof(to)) < 0 && errno != EAGAIN)
		perror("sendto");
}

static size_t
eth_hdr(uint8_t *f, const struct cl *c, const uint8_t *dst, uint16_t type)
{
	memcpy(f, dst, 6);
	memcpy(f + 6, c->mac, 6);
	put16(f + 12, type);
	return 14;
}

static void
send_disc(struct cl *c, uint8_t code)
{
	static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	uint8_t f[128] = {0};
	size_t o = eth_hdr(f, c, code == PADI ? bcast : c->ac, ETH_DISC), t;
	uint32_t hu = htonl((uint32_t)(c - cls));

	f[o] = 0x11;
	f[o + 1] = code;
	t = o + 6;
	t += put16(f + t, TAG_SERVICE);
	t += put16(f + t, 0);
	t += put16(f + t, TAG_HOST_UNIQ);
	t += put16(f + t, 4);
	memcpy(f + t, &hu, 4);
	t += 4;
	if (code == PADR && c->cookie_len != 0) {
		t += put16(f + t, TAG_COOKIE);
		t += put16(f + t, c->cookie_len);
		memcpy(f + t, c->cookie, c->cookie_len);
		t += c->cookie_len;
	}
	put16(f + o + 4, (uint16_t)(t - o - 6));
	xmit(f, t);
}

/* A PPP packet on the session: proto, then code, id, and data. */
static void
send_ppp(struct cl *c, uint16_t proto, uint8_t code, uint8_t id, const uint8_t *d, size_t dl)
{
	uint8_t f[1600] = {0};
	size_t o = eth_hdr(f, c, c->ac, ETH_SESS);

	f[o] = 0x11;
	put16(f + o + 2, c->sid);
	put16(f + o + 4, (uint16_t)(2 + 4 + dl));
	put16(f + o + 6, proto);
	f[o + 8] = code;
	f[o + 9] = id;
	put16(f + o + 10, (uint16_t)(4 + dl));
	memcpy(f + o + 12, d, dl);
	xmit(f, o + 12 + dl);
}

static void
send_step(struct cl *c)
{
	uint8_t d[300];
	size_t n;
	int ul;

	c->t_tx = now_ms();
	switch (c->st) {
	case ST_PADI: send_disc(c, PADI); break;
	case ST_PADR: send_disc(c, PADR); break;
	case ST_LCP:
		if (c->lcp_ours)
			break;
		/* MRU 1492, magic number */
		d[0] = 1;
		d[1] = 4;
		put16(d + 2, 1492);
		d[4] = 5;
		d[5] = 6;
		memcpy(d + 6, c->mac + 2, 4);
		send_ppp(c, PPP_LCP, CONF_REQ, ++c->id, d, 10);
		break;
	case ST_PAP:
		ul = snprintf((char *)d + 1, 200, "%s%u", user_prefix,
			      (unsigned int)(c - cls) % users);
		d[0] = (uint8_t)ul;
		n = 1 + (size_t)ul;
		d[n] = (uint8_t)strlen(password);
		memcpy(d + n + 1, password, d[n]);
		n += 1 + d[n];
		send_ppp(c, PPP_PAP, 1, ++c->id, d, n);
		break;
	case ST_IPCP:
		if (c->ipcp_ours)
			break;
		d[0] = 3;
		d[1] = 6;
		memcpy(d + 2, &c->ip, 4);
		send_ppp(c, PPP_IPCP, CONF_REQ, ++c->id, d, 6);
		break;
	default: break;
	}
}

static void
start(struct cl *c)
{
	c->st = ST_PADI;
	c->t_start = now_ms();
	send_step(c);
}

static void
lcp_done(struct cl *c)
{
	if (c->st == ST_LCP && c->lcp_ours && c->lcp_theirs) {
		c->st = ST_PAP;
		send_step(c);
	}
}

static void
ipcp_done(struct cl *c)
{
	if (c->st == ST_IPCP && c->ipcp_ours && c->ipcp_theirs) {
		c->st = ST_BOUND;
		c->t_bound = now_ms();
	}
}

static void
disc_input(struct cl *c, const uint8_t *p, size_t len)
{
	size_t o, tl;
	uint16_t plen;

	if (len < 6 || p[0] != 0x11)
		return;
	plen = get16(p + 4);
	if (plen > len - 6)
		return;
	if (p[1] == PADO && c->st == ST_PADI) {
		c->cookie_len = 0;
		for (o = 6; o + 4 <= 6u + plen; o += 4 + tl) {
			tl = get16(p + o + 2);
			if (o + 4 + tl > 6u + plen)
				break;
			if (get16(p + o) == TAG_COOKIE && tl <= sizeof(c->cookie)) {
				memcpy(c->cookie, p + o + 4, tl);
				c->cookie_len = (uint8_t)tl;
			}
		}
		c->st = ST_PADR;
		send_step(c);
	} else if (p[1] == PADS && c->st == ST_PADR && get16(p + 2) != 0) {
		c->sid = get16(p + 2);
		c->st = ST_LCP;
		send_step(c);
	} else if (p[1] == PADT && get16(p + 2) == c->sid) {
		c->st = ST_IDLE;
	}
}

static void
sess_input(struct cl *c, const uint8_t *p, size_t len)
{
	uint16_t proto, plen;
	const uint8_t *q;
	uint8_t code, id;
	size_t ql, i;

	if (len < 12 || p[0] != 0x11 || p[1] != 0 || get16(p + 2) != c->sid)
		return;
	plen = get16(p + 4);
	if (plen < 6 || plen > len - 6)
		return;
	proto = get16(p + 6);
	q = p + 8;
	ql = plen - 2;
	code = q[0];
	id = q[1];
	if (get16(q + 2) < 4 || get16(q + 2) > ql)
		return;
	ql = get16(q + 2);
	switch (proto) {
	case PPP_LCP:
		if (code == CONF_REQ) {
			send_ppp(c, PPP_LCP, CONF_ACK, id, q + 4, ql - 4);
			c->lcp_theirs = true;
			lcp_done(c);
		} else if (code == CONF_ACK && id == c->id) {
			c->lcp_ours = true;
			lcp_done(c);
		} else if (code == ECHO_REQ && ql >= 8) {
			uint8_t d[4];

			memcpy(d, c->mac + 2, 4); /* our magic number */
			send_ppp(c, PPP_LCP, ECHO_REP, id, d, 4);
		}
		break;
	case PPP_PAP:
		if (c->st == ST_PAP && code == 2) {
			/* our IPCP request waits for the AC's: one sent before the
			 * AC's IPCP started is dropped there (RFC 1661 Starting) */
			c->st = ST_IPCP;
			c->t_tx = now_ms();
		} else if (c->st == ST_PAP && code == 3) {
			c->st = ST_IDLE; /* refused: counted as not bound */
		}
		break;
	case PPP_IPCP:
		if (code == CONF_REQ) {
			send_ppp(c, PPP_IPCP, CONF_ACK, id, q + 4, ql - 4);
			if (!c->ipcp_theirs && c->st == ST_IPCP)
				send_step(c);
			c->ipcp_theirs = true;
			ipcp_done(c);
		} else if (code == CONF_NAK && id == c->id) {
			for (i = 4; i + 2 <= ql && q[i + 1] >= 2; i += q[i + 1])
				if (q[i] == 3 && q[i + 1] == 6)
					memcpy(&c->ip, q + i + 2, 4);
			send_step(c);
		} else if (code == CONF_ACK && id == c->id) {
			c->ipcp_ours = true;
			ipcp_done(c);
		}
		break;
	case PPP_IPV6CP:
		if (code == CONF_REQ) {
			uint8_t d[1500];

			put16(d, PPP_IPV6CP);
			memcpy(d + 2, q, ql);
			/* an identifier of its own: c->id names our pending request */
			send_ppp(c, PPP_LCP, PROTO_REJ, ++c->rej_id, d, 2 + ql);
		}
		break;
	default: break;
	}
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int
main(int argc, char **argv)
{
	unsigned int inflight = 0, started = 0, bound = 0, i, timeout_s = 60, active;
	uint64_t base = 0x100000, t0, t_end, last_bound = 0, last_check = 0, *lat;
	uint8_t buf[2048];
	struct ifreq ifr;
	int k, rcv = 8 << 20;

	if (argc < 3) {
		fprintf(stderr,
			"usage: %s IFNAME N [--base HEX] [--inflight K] [--user PREFIX] "
			"[--users U] [--password PW] [--timeout S]\n",
			argv[0]);
		return 2;
	}
	nb = (unsigned int)strtoul(argv[2], NULL, 0);
	for (k = 3; k + 1 < argc; k += 2) {
		if (strcmp(argv[k], "--base") == 0)
			base = strtoull(argv[k + 1], NULL, 16);
		else if (strcmp(argv[k], "--inflight") == 0)
			inflight = (unsigned int)strtoul(argv[k + 1], NULL, 0);
		else if (strcmp(argv[k], "--user") == 0)
			user_prefix = argv[k + 1];
		else if (strcmp(argv[k], "--users") == 0)
			users = (unsigned int)strtoul(argv[k + 1], NULL, 0);
		else if (strcmp(argv[k], "--password") == 0)
			password = argv[k + 1];
		else if (strcmp(argv[k], "--timeout") == 0)
			timeout_s = (unsigned int)strtoul(argv[k + 1], NULL, 0);
	}
	if (nb == 0 || users == 0 || strlen(password) > 200 || strlen(user_prefix) > 180) {
		fprintf(stderr, "bad arguments\n");
		return 2;
	}
	if (inflight == 0 || inflight > nb)
		inflight = nb;
	cls = calloc(nb, sizeof(*cls));
	lat = calloc(nb, sizeof(*lat));
	fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	if (cls == NULL || lat == NULL || fd < 0) {
		perror("set-up");
		return 2;
	}
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", argv[1]);
	if (ioctl(fd, SIOCGIFINDEX, &ifr) < 0) {
		perror(argv[1]);
		return 2;
	}
	memset(&to, 0, sizeof(to));
	to.sll_family = AF_PACKET;
	to.sll_protocol = htons(ETH_P_ALL);
	to.sll_ifindex = ifr.ifr_ifindex;
	if (bind(fd, (struct sockaddr *)&to, sizeof(to)) < 0) {
		perror("bind");
		return 2;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcv, sizeof(rcv));
	for (i = 0; i < nb; i++) {
		uint64_t m = base + i;

		cls[i].mac[0] = 0x02;
		for (k = 0; k < 5; k++)
			cls[i].mac[5 - k] = (uint8_t)(m >> (8 * k));
	}
	t0 = now_ms();
	t_end = t0 + (uint64_t)timeout_s * 1000;
	while (bound < nb && now_ms() < t_end) {
		struct pollfd pf = {.fd = fd, .events = POLLIN};
		uint64_t now;
		ssize_t n;

		/* keep inflight clients between their first PADI and bound */
		active = 0;
		for (i = 0; i < started; i++)
			active += cls[i].st != ST_BOUND && cls[i].st != ST_IDLE;
		while (started < nb && active < inflight) {
			start(&cls[started++]);
			active++;
		}
		poll(&pf, 1, 1);
		for (;;) {
			struct sockaddr_ll from;
			socklen_t fl = sizeof(from);
			uint16_t type;
			uint64_t m = 0;

			n = recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&from,
				     &fl);
			if (n < 14)
				break;
			/* our own frames, seen on their way out */
			if (from.sll_pkttype == PACKET_OUTGOING || buf[0] != 0x02)
				continue;
			type = get16(buf + 12);
			for (k = 1; k < 6; k++)
				m = m << 8 | buf[k];
			if (m < base || m - base >= started)
				continue;
			i = (unsigned int)(m - base);
			if (type == ETH_DISC) {
				memcpy(cls[i].ac, buf + 6, 6);
				disc_input(&cls[i], buf + 14, (size_t)n - 14);
			} else if (type == ETH_SESS) {
				sess_input(&cls[i], buf + 14, (size_t)n - 14);
			}
			if (cls[i].st == ST_BOUND && cls[i].t_bound != 0 && lat[i] == 0) {
				lat[i] = cls[i].t_bound - cls[i].t_start + 1;
				bound++;
				last_bound = cls[i].t_bound;
			}
		}
		now = now_ms();
		if (now - last_check >= 50) {
			last_check = now;
			for (i = 0; i < started; i++) {
				struct cl *c = &cls[i];

				if (c->st == ST_BOUND || c->st == ST_IDLE ||
				    now - c->t_tx < RESEND_MS)
					continue;
				resent++;
				if (getenv("EGW_GEN_DEBUG") != NULL)
					fprintf(stderr,
						"client %u: step %d again (lcp %d/%d ipcp %d/%d)\n",
						i, c->st, c->lcp_ours, c->lcp_theirs, c->ipcp_ours,
						c->ipcp_theirs);
				send_step(c);
				c->t_tx = now; /* also where the step sends nothing */
			}
		}
	}
	{
		uint64_t *l = calloc(bound + 1, sizeof(*l)), *tb = calloc(bound + 1, sizeof(*tb));
		unsigned int j = 0, n99 = (nb * 99 + 99) / 100;
		double s = (double)((last_bound > t0 ? last_bound : t0) - t0) / 1000.0, s99 = 0;

		if (l == NULL || tb == NULL) {
			perror("results");
			return 2;
		}
		for (i = 0; i < nb; i++)
			if (lat[i] != 0) {
				tb[j] = cls[i].t_bound - t0;
				l[j++] = lat[i] - 1;
			}
		qsort(l, j, sizeof(*l), cmp_u64);
		qsort(tb, j, sizeof(*tb), cmp_u64);
		if (j >= n99 && n99 != 0)
			s99 = (double)tb[n99 - 1] / 1000.0;
		printf("bound %u of %u in %.3f s (%.1f/s); 99%% in %.3f s (%.1f/s); "
		       "first-PADI-to-bound median %llu ms, p99 %llu ms; resent %u\n",
		       bound, nb, s, s > 0 ? bound / s : 0.0, s99, s99 > 0 ? n99 / s99 : 0.0,
		       j ? (unsigned long long)l[j / 2] : 0ULL,
		       j ? (unsigned long long)l[(j * 99) / 100 < j ? (j * 99) / 100 : j - 1]
			 : 0ULL,
		       resent);
		free(l);
		free(tb);
	}
	free(cls);
	free(lat);
	close(fd);
	return bound == nb ? 0 : 1;
}
