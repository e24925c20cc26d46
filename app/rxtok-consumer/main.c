/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * egw-rxtok-consumer: example rxtokens consumer outside edgegw (no EAL).
 *
 * Attaches as a consumer, reads records, reassembles each payload from its
 * fragments (FIRST ... LAST), optionally verifies the test payload format and
 * gives the tokens back in batches of ranges. Ends after --count payloads,
 * after --timeout seconds without a record, on SIGINT/SIGTERM or when edgegw
 * closes the connection, and prints one machine-readable line:
 *
 *   consumer NAME: payloads P bytes B bad X steered S returned T held H
 *
 * P counts every payload that ended (good or bad), B their bytes, X the bad
 * ones, S the -EPIPE (steered) notices, T the tokens given back and H the
 * tokens received and not given back (all of them with --hold).
 *
 * Test payload format (tests craft it with scapy): "EGWP", seq (be32),
 * length L of the whole payload including this 16-byte header (be32),
 * CRC32 (zlib/IEEE, be32) of bytes 16..L-1, then byte i = (seq + i) & 0xff.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "egw_rxtok_client.h"

/* Records read per call. */
#define RECV_BURST 64
/* Idle sleep between empty polls of the record ring. */
#define IDLE_SLEEP_NS 100000L
/* Give up returning tokens when the return ring stays full this long. */
#define RETURN_STUCK_SEC 10.0
/* Larger payloads are not copied for verification (a LAST never came). */
#define MAX_PAYLOAD (16u << 20)
#define HDR_LEN 16u
#define PAYLOAD_MAGIC "EGWP"

struct options {
	const char *socket_path;
	const char *consumer;
	uint64_t count; /* 0: no limit */
	double timeout; /* seconds without a record; 0: none */
	unsigned int batch;
	bool verify;
	bool hold;
	bool quiet;
};

struct counters {
	uint64_t payloads;
	uint64_t bytes;
	uint64_t bad;
	uint64_t steered;
	uint64_t received; /* tokens of records naming a page of the region */
	uint64_t returned;
};

/* The payload being reassembled. */
struct payload {
	bool open;
	bool broken; /* a structural problem; why says which */
	char why[128];
	uint64_t len;
	uint8_t *buf; /* copy, with --verify only */
	size_t have;  /* bytes of this payload in buf */
	size_t cap;
};

/* Tokens waiting to be given back, coalesced into ranges. */
struct pending {
	struct egw_rxtok_range r[EGW_RXTOK_MAX_RANGES];
	unsigned int n;
};

struct consumer {
	struct options opt;
	struct egw_rxtok_client *cl;
	struct counters cnt;
	struct payload pl;
	struct pending pend;
	bool disconnected;
	bool failed;
};

static volatile sig_atomic_t stop_requested;
static uint32_t crc_table[256];

static void
on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void
crc32_init(void)
{
	uint32_t i, k, c;

	for (i = 0; i < 256; i++) {
		c = i;
		for (k = 0; k < 8; k++)
			c = (c & 1) != 0 ? 0xedb88320u ^ (c >> 1) : c >> 1;
		crc_table[i] = c;
	}
}

/* zlib's crc32(0, buf, len). */
static uint32_t
crc32_ieee(const uint8_t *buf, size_t len)
{
	uint32_t c = 0xffffffffu;
	size_t i;

	for (i = 0; i < len; i++)
		c = crc_table[(c ^ buf[i]) & 0xff] ^ (c >> 8);
	return c ^ 0xffffffffu;
}

static uint32_t
get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static double
now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void
idle_sleep(void)
{
	struct timespec ts = {.tv_sec = 0, .tv_nsec = IDLE_SLEEP_NS};

	nanosleep(&ts, NULL);
}

/*
 * Give back pending ranges. With @p wait, retry while the ring is full (the
 * server drains it from its control thread) until everything is enqueued;
 * without, enqueue what fits and keep the rest for later. Returns false when
 * the connection closed, on an error, or when the ring stayed full
 * RETURN_STUCK_SEC.
 */
static bool
flush_returns(struct consumer *c, bool wait)
{
	struct pending *p = &c->pend;
	double deadline = 0;
	unsigned int done = 0, k;
	bool ok = true;
	int ret;

	while (done < p->n) {
		ret = egw_rxtok_client_return(c->cl, &p->r[done], p->n - done);
		if (ret < 0) {
			if (ret == -ENOTCONN)
				c->disconnected = true;
			else
				fprintf(stderr, "egw-rxtok-consumer: return: %s\n", strerror(-ret));
			ok = false;
			break;
		}
		for (k = done; k < done + (unsigned int)ret; k++)
			c->cnt.returned += p->r[k].token_count;
		done += (unsigned int)ret;
		if (done == p->n || !wait)
			break;
		if (deadline == 0) {
			deadline = now_sec() + RETURN_STUCK_SEC;
		} else if (now_sec() >= deadline) {
			fprintf(stderr, "egw-rxtok-consumer: return ring full for %.0f s\n",
				RETURN_STUCK_SEC);
			ok = false;
			break;
		}
		idle_sleep();
	}
	memmove(&p->r[0], &p->r[done], (p->n - done) * sizeof(p->r[0]));
	p->n -= done;
	return ok;
}

/* Queue one token for return, extending the last range when consecutive. */
static bool
give_back(struct consumer *c, uint32_t token)
{
	struct pending *p = &c->pend;
	struct egw_rxtok_range *last = p->n > 0 ? &p->r[p->n - 1] : NULL;

	if (last != NULL && last->token_count < EGW_RXTOK_MAX_RANGE_TOKENS &&
	    token == last->token_start + last->token_count) {
		last->token_count++;
		return true;
	}
	if (p->n == c->opt.batch && !flush_returns(c, true))
		return false;
	p->r[p->n++] = (struct egw_rxtok_range){.token_start = token, .token_count = 1};
	return true;
}

static void __attribute__((format(printf, 2, 3)))
payload_break(struct payload *pl, const char *fmt, ...)
{
	va_list ap;

	if (pl->broken)
		return; /* keep the first reason */
	pl->broken = true;
	va_start(ap, fmt);
	vsnprintf(pl->why, sizeof(pl->why), fmt, ap);
	va_end(ap);
}

/* Check the test payload format; NULL if good, else what is wrong (in @p why). */
static const char *
verify_payload(const uint8_t *b, uint64_t len, char *why, size_t whylen)
{
	uint32_t seq, l, crc, got;
	uint64_t i;

	if (len < HDR_LEN) {
		snprintf(why, whylen, "%" PRIu64 " bytes, shorter than the %u-byte header", len,
			 HDR_LEN);
		return why;
	}
	if (memcmp(b, PAYLOAD_MAGIC, 4) != 0) {
		snprintf(why, whylen, "bad magic %02x%02x%02x%02x", b[0], b[1], b[2], b[3]);
		return why;
	}
	seq = get_be32(b + 4);
	l = get_be32(b + 8);
	crc = get_be32(b + 12);
	if (l != len) {
		snprintf(why, whylen, "length field %u, received %" PRIu64 " bytes", l, len);
		return why;
	}
	for (i = HDR_LEN; i < len; i++) {
		if (b[i] != (uint8_t)(seq + i)) {
			snprintf(why, whylen, "byte %" PRIu64 " is 0x%02x, expected 0x%02x", i,
				 b[i], (uint8_t)(seq + i));
			return why;
		}
	}
	got = crc32_ieee(b + HDR_LEN, len - HDR_LEN);
	if (got != crc) {
		snprintf(why, whylen, "crc32 0x%08x, header says 0x%08x", got, crc);
		return why;
	}
	return NULL;
}

/* The payload ended (LAST, or cut short by the next FIRST or the end of the run). */
static void
payload_end(struct consumer *c)
{
	struct payload *pl = &c->pl;
	const char *bad = NULL;
	char why[128];
	char seq[16] = "?";

	c->cnt.payloads++;
	c->cnt.bytes += pl->len;
	if (pl->broken)
		bad = pl->why;
	else if (c->opt.verify)
		bad = verify_payload(pl->buf, pl->have, why, sizeof(why));
	if (bad != NULL) {
		c->cnt.bad++;
		if (pl->have >= 8 && memcmp(pl->buf, PAYLOAD_MAGIC, 4) == 0)
			snprintf(seq, sizeof(seq), "%u", get_be32(pl->buf + 4));
		if (!c->opt.quiet)
			printf("bad payload seq %s: %s\n", seq, bad);
	}
	pl->open = false;
	pl->broken = false;
	pl->len = 0;
	pl->have = 0;
}

static void
payload_append(struct consumer *c, const uint8_t *data, uint16_t size)
{
	struct payload *pl = &c->pl;
	uint8_t *nb;
	size_t cap;

	if (c->opt.verify && !pl->broken) {
		if (pl->len + size > MAX_PAYLOAD) {
			payload_break(pl, "longer than %u bytes", MAX_PAYLOAD);
		} else {
			if (pl->len + size > pl->cap) {
				cap = pl->cap == 0 ? 65536 : pl->cap;
				while (cap < pl->len + size)
					cap *= 2;
				nb = realloc(pl->buf, cap);
				if (nb == NULL) {
					payload_break(pl, "out of memory for %zu bytes", cap);
					goto count;
				}
				pl->buf = nb;
				pl->cap = cap;
			}
			memcpy(pl->buf + pl->len, data, size);
			pl->have = pl->len + size;
		}
	}
count:
	pl->len += size;
}

/* One record: its token is held (and queued for return), its bytes join the payload. */
static bool
handle_record(struct consumer *c, const struct egw_rxtok_rec *rec, bool counting)
{
	const uint8_t *page = egw_rxtok_client_page(c->cl, rec->token);
	bool in_page = page != NULL && (uint32_t)rec->offset + rec->size <= EGW_RXTOK_PAGE_SIZE;
	struct payload *pl = &c->pl;

	if (page != NULL) {
		c->cnt.received++;
		if (!c->opt.hold && !give_back(c, rec->token))
			return false;
	}
	if (!counting)
		return true;
	if ((rec->flags & EGW_RXTOK_REC_FIRST) != 0) {
		if (pl->open) {
			payload_break(pl, "no LAST fragment before the next FIRST");
			payload_end(c);
		}
		pl->open = true;
	} else if (!pl->open) {
		pl->open = true;
		payload_break(pl, "fragment without a FIRST");
	}
	if (!in_page)
		payload_break(pl, "record token %u offset %u size %u outside the region",
			      rec->token, rec->offset, rec->size);
	else
		payload_append(c, page + rec->offset, rec->size);
	if ((rec->flags & EGW_RXTOK_REC_LAST) != 0)
		payload_end(c);
	return true;
}

static void
run(struct consumer *c)
{
	struct egw_rxtok_rec recs[RECV_BURST];
	double last = now_sec();
	int n, i;

	while (!stop_requested) {
		n = egw_rxtok_client_recv(c->cl, recs, RECV_BURST);
		if (n == -EPIPE) {
			c->cnt.steered++;
			if (!c->opt.quiet)
				fprintf(stderr, "egw-rxtok-consumer: flow steered to another "
						"binding\n");
			continue;
		}
		if (n == -ENOTCONN) {
			c->disconnected = true;
			return;
		}
		if (n < 0) {
			fprintf(stderr, "egw-rxtok-consumer: recv: %s\n", strerror(-n));
			c->failed = true;
			return;
		}
		if (n == 0) {
			/* Idle: flush a partial batch so tokens do not sit here. */
			if (c->pend.n > 0 && !flush_returns(c, false)) {
				c->failed = !c->disconnected;
				return;
			}
			if (c->opt.timeout > 0 && now_sec() - last >= c->opt.timeout)
				return;
			idle_sleep();
			continue;
		}
		last = now_sec();
		for (i = 0; i < n; i++) {
			/* Past --count, records are only given back, not counted. */
			bool counting = c->opt.count == 0 || c->cnt.payloads < c->opt.count;

			if (!handle_record(c, &recs[i], counting)) {
				c->failed = !c->disconnected;
				return;
			}
		}
		if (c->opt.count != 0 && c->cnt.payloads >= c->opt.count)
			return;
	}
}

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: egw-rxtok-consumer --socket PATH --consumer NAME [--count N]\n"
		"       [--timeout SEC] [--batch N] [--verify] [--hold] [--quiet]\n"
		"  --count N      stop after N payloads (exit 1 if fewer arrived)\n"
		"  --timeout SEC  stop after SEC seconds without a record (default: never)\n"
		"  --batch N      give tokens back in batches of N ranges (1..%u, default 32)\n"
		"  --verify       check the test payload format, print each bad payload\n"
		"  --hold         never give tokens back\n"
		"  --quiet        print only 'attached' and the result line\n"
		"exit status: 0 if no bad payload (and N payloads with --count), 1 otherwise,\n"
		"2 for a usage error\n",
		EGW_RXTOK_MAX_RANGES);
}

static bool
parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *v)
{
	char *end;
	unsigned long long x;

	if (s[0] < '0' || s[0] > '9')
		return false;
	errno = 0;
	x = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || x < min || x > max)
		return false;
	*v = x;
	return true;
}

static int
parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{"socket", required_argument, NULL, 's'},
		{"consumer", required_argument, NULL, 'c'},
		{"count", required_argument, NULL, 'n'},
		{"timeout", required_argument, NULL, 't'},
		{"batch", required_argument, NULL, 'b'},
		{"verify", no_argument, NULL, 'v'},
		{"hold", no_argument, NULL, 'H'},
		{"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	uint64_t v;
	char *end;
	int opt;

	*o = (struct options){.batch = 32};
	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (opt) {
		case 's': o->socket_path = optarg; break;
		case 'c': o->consumer = optarg; break;
		case 'n':
			if (!parse_u64(optarg, 1, UINT64_MAX, &o->count)) {
				fprintf(stderr, "bad --count '%s': a number >= 1\n", optarg);
				return -1;
			}
			break;
		case 't':
			errno = 0;
			o->timeout = strtod(optarg, &end);
			if (errno != 0 || end == optarg || *end != '\0' || !(o->timeout >= 0) ||
			    o->timeout > 1e9) {
				fprintf(stderr, "bad --timeout '%s': seconds >= 0\n", optarg);
				return -1;
			}
			break;
		case 'b':
			if (!parse_u64(optarg, 1, EGW_RXTOK_MAX_RANGES, &v)) {
				fprintf(stderr, "bad --batch '%s': 1..%u ranges\n", optarg,
					EGW_RXTOK_MAX_RANGES);
				return -1;
			}
			o->batch = (unsigned int)v;
			break;
		case 'v': o->verify = true; break;
		case 'H': o->hold = true; break;
		case 'q': o->quiet = true; break;
		case 'h': usage(stdout); exit(0);
		default: return -1;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	if (o->socket_path == NULL || o->consumer == NULL) {
		fprintf(stderr, "--socket and --consumer are required\n");
		return -1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	struct sigaction sa = {.sa_handler = on_signal};
	struct consumer c = {0};
	char err[256];
	bool ok;

	if (parse_options(argc, argv, &c.opt) < 0) {
		usage(stderr);
		return 2;
	}
	crc32_init();
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	c.cl = egw_rxtok_client_attach(c.opt.socket_path, c.opt.consumer, err, sizeof(err));
	if (c.cl == NULL) {
		fprintf(stderr, "egw-rxtok-consumer: attach: %s\n", err);
		return 1;
	}
	printf("attached\n");
	fflush(stdout);

	run(&c);
	if (c.pl.open) {
		payload_break(&c.pl, "no LAST fragment before the end of the run");
		payload_end(&c);
	}
	if (!c.disconnected && c.pend.n > 0 && !flush_returns(&c, true))
		c.failed = !c.disconnected;
	if (c.disconnected)
		fprintf(stderr, "egw-rxtok-consumer: edgegw closed the connection\n");

	printf("consumer %s: payloads %" PRIu64 " bytes %" PRIu64 " bad %" PRIu64
	       " steered %" PRIu64 " returned %" PRIu64 " held %" PRIu64 "\n",
	       c.opt.consumer, c.cnt.payloads, c.cnt.bytes, c.cnt.bad, c.cnt.steered,
	       c.cnt.returned, c.cnt.received - c.cnt.returned);
	fflush(stdout);
	egw_rxtok_client_detach(c.cl);
	free(c.pl.buf);

	ok = c.cnt.bad == 0 && !c.failed && (c.opt.count == 0 || c.cnt.payloads == c.opt.count);
	return ok ? 0 : 1;
}
