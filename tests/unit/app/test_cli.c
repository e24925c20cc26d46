/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The command language against a live application on two net_null ports:
 * each line's status, and that a failing line changes nothing.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pcap/pcap.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>

#include "fwd.h"
#include "check.h"

static int
run(const char *line)
{
	int rc = egw_cli_run_line(line);

	printf("[test] '%.60s' -> %d\n", line, rc);
	return rc;
}

#define OK(line) CHECK(run(line) == 0, "'%s' should succeed", line)
#define BAD(line) CHECK(run(line) < 0, "'%s' should fail", line)

static int
write_pcap(const char *path, unsigned int n)
{
	pcap_t *p = pcap_open_dead(DLT_EN10MB, 65535);
	pcap_dumper_t *d;
	uint8_t frame[60] = {0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2, 0x08, 0x00, 0x45};
	struct pcap_pkthdr h = {.caplen = sizeof(frame), .len = sizeof(frame)};
	unsigned int i;

	if (p == NULL)
		return -1;
	d = pcap_dump_open(p, path);
	if (d == NULL) {
		pcap_close(p);
		return -1;
	}
	for (i = 0; i < n; i++)
		pcap_dump((u_char *)d, &h, frame);
	pcap_dump_close(d);
	pcap_close(p);
	return 0;
}

static void
check_identity(void)
{
	uint16_t pid;

	RTE_ETH_FOREACH_DEV (pid) {
		struct egw_qstats s;

		egw_qstats_sum(pid, &s);
		CHECK(egw_stats_identity_ok(pid, &s), "port %u: accounting identity", pid);
	}
}

/* ---- esp commands ---------------------------------------------------------- */

static int
first_policy(const struct egw_esp_policy *p, uint64_t hits __rte_unused, void *arg)
{
	*(uint32_t *)arg = p->id;
	return 1;
}

/* What the esp commands can change: the SAs (SPI, direction, mode, AEAD,
 * endpoints, options) and the policies (id, position, match, action). */
struct esp_snap {
	unsigned int n_out, n_in, n_pol;
	uint64_t sum;
	char state[256];
};

static void
mix(uint64_t *h, const void *p, size_t n)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		*h = (*h ^ b[i]) * 0x100000001b3ull;
}

static int
snap_sa(const struct egw_esp_sa_info *in, void *arg)
{
	struct esp_snap *s = arg;

	mix(&s->sum, &in->conf, sizeof(in->conf));
	return 0;
}

static int
snap_policy(const struct egw_esp_policy *p, uint64_t hits __rte_unused, void *arg)
{
	struct esp_snap *s = arg;

	s->n_pol++;
	mix(&s->sum, p, sizeof(*p));
	return 0;
}

static void
esp_snap_take(struct esp_snap *s)
{
	const char *path = egw_esp_state_path();

	memset(s, 0, sizeof(*s));
	s->sum = 0xcbf29ce484222325ull;
	s->n_out = egw_esp_sa_count(EGW_ESP_DIR_OUT);
	s->n_in = egw_esp_sa_count(EGW_ESP_DIR_IN);
	egw_esp_sa_walk(snap_sa, s);
	egw_esp_policy_walk(EGW_ESP_DIR_OUT, snap_policy, s);
	egw_esp_policy_walk(EGW_ESP_DIR_IN, snap_policy, s);
	snprintf(s->state, sizeof(s->state), "%s", path != NULL ? path : "");
}

static bool
esp_snap_same(const struct esp_snap *a, const struct esp_snap *b)
{
	return a->n_out == b->n_out && a->n_in == b->n_in && a->n_pol == b->n_pol &&
	       a->sum == b->sum && strcmp(a->state, b->state) == 0;
}

/* A bad esp line: fails, and every SA, policy and the state file are as
 * before. */
#define ESP_BAD(line)                                                                 \
	do {                                                                          \
		struct esp_snap b0_, b1_;                                             \
		esp_snap_take(&b0_);                                                  \
		CHECK(run(line) < 0, "'%s' should fail", line);                       \
		esp_snap_take(&b1_);                                                  \
		CHECK(esp_snap_same(&b0_, &b1_), "'%s' changed the ESP state", line); \
	} while (0)

#define K16 "000102030405060708090a0b0c0d0e0f"
#define SALT "a0a1a2a3"
#define KEY128 K16 SALT        /* 20 bytes: aes-128-gcm */
#define KEY256 K16 K16 SALT    /* 36 bytes: aes-256-gcm, chacha20-poly1305 */
#define KEY128B K16 "b0b1b2b3" /* KEY128 with another salt: another key */
#define TUN4 " mode tunnel src 192.0.2.1 dst 198.51.100.1"

static int
find_policy(const struct egw_esp_policy *p, uint64_t hits __rte_unused, void *arg)
{
	uint32_t *id = arg;

	if (p->action == EGW_ESP_PROTECT && p->spi == 0x100) {
		*id = p->id;
		return 1;
	}
	return 0;
}

static void
test_esp(void)
{
	char dir[] = "/tmp/egw_test_cli_esp_XXXXXX", line[512], state[64];
	struct egw_esp_sa_info info;
	uint32_t id = 0;
	unsigned int i;

	CHECK(mkdtemp(dir) != NULL, "mkdtemp");
	snprintf(state, sizeof(state), "%s/state", dir);
	OK("help esp");
	OK("show esp sa");
	OK("show esp policy");
	OK("show esp stats");
	BAD("show esp");
	BAD("show esp nonsense");
	BAD("show esp sa details");
	BAD("show esp policy extra");
	CHECK(egw_esp_sa_count(EGW_ESP_DIR_OUT) == 0 && egw_esp_sa_count(EGW_ESP_DIR_IN) == 0,
	      "no SA at start");

	/* outbound SAs need a state file */
	ESP_BAD("esp sa add 0x100 out aead aes-128-gcm key " KEY128 TUN4);
	ESP_BAD("esp state-file");
	ESP_BAD("esp state-file /nonexistent-dir/x/state create");
	/* a missing file is refused unless 'create' says it is new */
	snprintf(line, sizeof(line), "esp state-file %s", state);
	ESP_BAD(line);
	snprintf(line, sizeof(line), "esp state-file %s create extra", state);
	ESP_BAD(line);
	snprintf(line, sizeof(line), "esp state-file %s create", state);
	OK(line);
	/* 'create' again: the file exists now */
	ESP_BAD(line);
	snprintf(line, sizeof(line), "esp state-file %s", state);
	OK(line);
	CHECK(egw_esp_state_path() != NULL && strcmp(egw_esp_state_path(), state) == 0,
	      "state file set");

	/* good SAs */
	OK("esp sa add 0x100 out aead aes-128-gcm key 0x" KEY128 TUN4 " esn on mtu 1400 ttl 32");
	/* one key, one SA: the outbound SA's key is refused for another SA of
	 * either direction */
	ESP_BAD("esp sa add 256 in aead aes-128-gcm key " KEY128 TUN4 " window 4096");
	ESP_BAD("esp sa add 0x101 out aead aes-128-gcm key " KEY128 TUN4);
	OK("esp sa add 256 in aead aes-128-gcm key " KEY128B TUN4 " window 4096");
	OK("esp sa add 0x200 in aead chacha20-poly1305 key " KEY256
	   " mode transport esn on window 64 natt sport 4500 dport 14500 seq 5 "
	   "lifetime packets 100 200 lifetime bytes 0 1000000");
	OK("esp sa add 4294967295 out aead aes-256-gcm key " KEY256
	   " mode tunnel src 2001:db8::1 dst 2001:db8::2 natt lifetime packets 0 5");
	CHECK(egw_esp_sa_count(EGW_ESP_DIR_OUT) == 2 && egw_esp_sa_count(EGW_ESP_DIR_IN) == 2,
	      "2 out, 2 in SAs");
	CHECK(egw_esp_sa_info(0x100, EGW_ESP_DIR_OUT, &info) == 0 && info.conf.esn &&
		      info.conf.mtu == 1400 && info.conf.ttl == 32 &&
		      info.conf.mode == EGW_ESP_MODE_TUNNEL &&
		      info.conf.tun_src.family == AF_INET && info.conf.tun_src.a[0] == 192,
	      "SA 0x100 out as configured");
	for (i = 0; i < EGW_ESP_KEY_MAX; i++)
		CHECK(info.conf.key[i] == 0, "no key in the SA info");
	CHECK(egw_esp_sa_info(0x200, EGW_ESP_DIR_IN, &info) == 0 && info.conf.natt &&
		      info.conf.natt_dport == 14500 && info.conf.window == 64 &&
		      info.conf.life_packets.hard == 200 && info.conf.life_bytes.hard == 1000000 &&
		      info.conf.aead == EGW_ESP_CHACHA20_POLY1305,
	      "SA 0x200 in as configured");

	/* bad SAs: each names the problem and changes nothing */
	ESP_BAD("esp sa add xyz out aead aes-128-gcm key " KEY128 TUN4);
	ESP_BAD("esp sa add 0x out aead aes-128-gcm key " KEY128 TUN4);
	ESP_BAD("esp sa add 0x1g0 out aead aes-128-gcm key " KEY128 TUN4);
	ESP_BAD("esp sa add -300 out aead aes-128-gcm key " KEY128 TUN4);
	ESP_BAD("esp sa add 0x100000000 out aead aes-128-gcm key " KEY128 TUN4);
	ESP_BAD("esp sa add 99999999999999999999999 out aead aes-128-gcm key " KEY128 TUN4);
	ESP_BAD("esp sa add 0 out aead aes-128-gcm key " KEY128 TUN4);
	ESP_BAD("esp sa add 255 out aead aes-128-gcm key " KEY128 TUN4);
	ESP_BAD("esp sa add 0xff in aead aes-128-gcm key " KEY128 TUN4);
	ESP_BAD("esp sa add 0x300 sideways aead aes-128-gcm key " KEY128 TUN4);
	ESP_BAD("esp sa add 0x300 out aead aes-192-gcm key " KEY128 TUN4);
	ESP_BAD("esp sa add 0x300 out aead aes-128-gcm key " KEY256 TUN4);
	ESP_BAD("esp sa add 0x300 out aead aes-256-gcm key " KEY128 TUN4);
	ESP_BAD("esp sa add 0x300 out aead chacha20-poly1305 key " K16 TUN4);
	ESP_BAD("esp sa add 0x300 out aead aes-128-gcm key " KEY128 "0" TUN4);
	ESP_BAD("esp sa add 0x300 out aead aes-128-gcm key 0x" K16 "a0a1a2zz" TUN4);
	ESP_BAD("esp sa add 0x300 out aead aes-128-gcm key 0x" TUN4);
	ESP_BAD("esp sa add 0x300 out aead aes-128-gcm key " KEY128 " mode tunnel");
	ESP_BAD("esp sa add 0x300 out aead aes-128-gcm key " KEY128 " mode tunnel src 192.0.2.1");
	ESP_BAD("esp sa add 0x300 out aead aes-128-gcm key " KEY128 " mode tunnel dst 192.0.2.1");
	ESP_BAD("esp sa add 0x300 out aead aes-128-gcm key " KEY128
		" mode tunnel src 192.0.2.1 dst 2001:db8::1");
	ESP_BAD("esp sa add 0x300 out aead aes-128-gcm key " KEY128
		" mode tunnel src 192.0.2.1 dst 192.0.2.300");
	ESP_BAD("esp sa add 0x300 out aead aes-128-gcm key " KEY128
		" mode transport src 192.0.2.1");
	ESP_BAD("esp sa add 0x300 out aead aes-128-gcm key " KEY128
		" mode transport src 192.0.2.1 dst 192.0.2.2");
	ESP_BAD("esp sa add 0x300 out aead aes-128-gcm key " KEY128 " mode tube");
	ESP_BAD("esp sa add 0x300 in aead aes-128-gcm key " KEY128 TUN4 " window 63");
	ESP_BAD("esp sa add 0x300 in aead aes-128-gcm key " KEY128 TUN4 " window 4097");
	ESP_BAD("esp sa add 0x300 in aead aes-128-gcm key " KEY128 TUN4 " window");
	ESP_BAD("esp sa add 0x300 in aead aes-128-gcm key " KEY128 TUN4 " window 128 window 256");
	ESP_BAD("esp sa add 0x300 out aead aes-128-gcm key " KEY128 TUN4 " mtu 1279");
	ESP_BAD("esp sa add 0x300 out aead aes-128-gcm key " KEY128 TUN4 " mtu 9001");
	ESP_BAD("esp sa add 0x300 out aead aes-128-gcm key " KEY128 TUN4 " ttl 0");
	ESP_BAD("esp sa add 0x300 out aead aes-128-gcm key " KEY128 TUN4 " ttl 256");
	ESP_BAD("esp sa add 0x300 out aead aes-128-gcm key " KEY128 TUN4 " esn maybe");
	ESP_BAD("esp sa add 0x300 out aead aes-128-gcm key " KEY128 TUN4 " sport 4500");
	ESP_BAD("esp sa add 0x300 out aead aes-128-gcm key " KEY128 TUN4 " natt sport 0");
	ESP_BAD("esp sa add 0x300 out aead aes-128-gcm key " KEY128 TUN4 " natt dport 65536");
	ESP_BAD("esp sa add 0x300 out aead aes-128-gcm key " KEY128 TUN4 " seq 4294967296");
	ESP_BAD("esp sa add 0x300 out aead aes-128-gcm key " KEY128 TUN4
		" seq 18446744073709551616 esn on");
	ESP_BAD("esp sa add 0x300 out aead aes-128-gcm key " KEY128 TUN4 " lifetime packets 10 5");
	ESP_BAD("esp sa add 0x300 out aead aes-128-gcm key " KEY128 TUN4 " lifetime packets 10");
	ESP_BAD("esp sa add 0x300 out aead aes-128-gcm key " KEY128 TUN4 " lifetime hours 1 2");
	ESP_BAD("esp sa add 0x300 out aead aes-128-gcm key " KEY128 TUN4 " colour blue");
	ESP_BAD("esp sa add 0x300 out aead aes-128-gcm " KEY128 TUN4);
	ESP_BAD("esp sa add 0x300 out");
	ESP_BAD("esp sa add 0x100 out aead aes-128-gcm key " KEY128 TUN4); /* exists */
	ESP_BAD("esp sa");
	ESP_BAD("esp");
	ESP_BAD("esp frobnicate");

	/* policies */
	OK("esp policy add out src 10.0.0.0/8 dst 0.0.0.0/0 proto tcp protect 0x100");
	OK("esp policy add out pos 0 src 10.1.0.0/16 dst 10.2.0.0/16 bypass");
	OK("esp policy add out src 10.9.9.9 dst 10.8.0.0/16 proto 47 discard");
	OK("esp policy add in src 2001:db8:1::/48 dst ::/0 proto icmp6 protect 0x200");
	OK("esp policy add in pos 5 src 192.0.2.0/24 dst 198.51.100.7 proto any protect 0x200");
	OK("show esp policy");
	OK("show esp sa");
	OK("show esp sa detail");
	OK("show esp stats");
	OK("show config");
	ESP_BAD("esp policy add out src 10.0.0.0/33 dst 0.0.0.0/0 bypass");
	ESP_BAD("esp policy add out src 10.0.0.300/8 dst 0.0.0.0/0 bypass");
	ESP_BAD("esp policy add out src ::/129 dst ::/0 bypass");
	ESP_BAD("esp policy add out src 10.0.0.0/x dst 0.0.0.0/0 bypass");
	ESP_BAD("esp policy add out src 10.0.0.0/8 dst ::/0 bypass");
	ESP_BAD("esp policy add out src 10.0.0.0/8 dst 0.0.0.0/0 protect 0x999");
	ESP_BAD("esp policy add out src 10.0.0.0/8 dst 0.0.0.0/0 protect 0x200"); /* in only */
	ESP_BAD("esp policy add out src 10.0.0.0/8 dst 0.0.0.0/0 protect 255");
	ESP_BAD("esp policy add out src 10.0.0.0/8 bypass");
	ESP_BAD("esp policy add out src 10.0.0.0/8 dst 0.0.0.0/0");
	ESP_BAD("esp policy add out src 10.0.0.0/8 dst 0.0.0.0/0 bypass proto tcp");
	ESP_BAD("esp policy add out src 10.0.0.0/8 src 11.0.0.0/8 dst 0.0.0.0/0 bypass");
	ESP_BAD("esp policy add out src 10.0.0.0/8 dst 0.0.0.0/0 proto icmp6 bypass");
	ESP_BAD("esp policy add in src ::/0 dst ::/0 proto icmp bypass");
	ESP_BAD("esp policy add out src 10.0.0.0/8 dst 0.0.0.0/0 proto 256 bypass");
	ESP_BAD("esp policy add out src 10.0.0.0/8 dst 0.0.0.0/0 proto sctp bypass");
	ESP_BAD("esp policy add out pos -1 src 10.0.0.0/8 dst 0.0.0.0/0 bypass");
	ESP_BAD("esp policy add out pos 99999 src 10.0.0.0/8 dst 0.0.0.0/0 bypass");
	ESP_BAD("esp policy add both src 10.0.0.0/8 dst 0.0.0.0/0 bypass");
	ESP_BAD("esp policy add out src 10.0.0.0/8 dst 0.0.0.0/0 bypass discard");
	ESP_BAD("esp policy add out src");
	ESP_BAD("esp policy del out 9999");
	ESP_BAD("esp policy del out 0");
	ESP_BAD("esp policy del out x");
	ESP_BAD("esp policy del sideways 1");
	ESP_BAD("esp policy del out");

	/* deleting */
	ESP_BAD("esp sa del 0x100");      /* both directions */
	ESP_BAD("esp sa del 0x100 out");  /* a policy protects with it */
	ESP_BAD("esp sa del 0x999");      /* unknown */
	ESP_BAD("esp sa del 0x999 in");   /* unknown */
	ESP_BAD("esp sa del 0x100 up");   /* direction */
	ESP_BAD("esp sa del 255");        /* reserved */
	ESP_BAD("esp sa del 0x100 in x"); /* extra word */
	snprintf(line, sizeof(line), "esp state-file %s/other", dir);
	ESP_BAD(line); /* outbound SAs exist */
	egw_esp_policy_walk(EGW_ESP_DIR_OUT, find_policy, &id);
	CHECK(id != 0, "the protect 0x100 policy has an id");
	snprintf(line, sizeof(line), "esp policy del out %u", id);
	OK(line);
	ESP_BAD(line); /* gone */
	OK("esp sa del 0x100 out");
	OK("esp sa del 0x100"); /* only the inbound one left */
	CHECK(egw_esp_sa_info(0x100, EGW_ESP_DIR_IN, &info) == -ENOENT &&
		      egw_esp_sa_info(0x100, EGW_ESP_DIR_OUT, &info) == -ENOENT,
	      "SA 0x100 gone in both directions");
	CHECK(egw_esp_sa_count(EGW_ESP_DIR_OUT) == 1 && egw_esp_sa_count(EGW_ESP_DIR_IN) == 1,
	      "1 out, 1 in SA left");

	/* the default of each direction */
	ESP_BAD("esp policy default out");
	ESP_BAD("esp policy default sideways discard");
	ESP_BAD("esp policy default out maybe");
	OK("esp policy default in discard");
	CHECK(egw_esp_policy_default_get(EGW_ESP_DIR_IN) == EGW_ESP_DEFAULT_DISCARD &&
		      egw_esp_policy_active(EGW_ESP_DIR_IN),
	      "inbound default discard: active without a rule");
	OK("show esp policy");
	OK("esp policy default in auto");
	CHECK(egw_esp_policy_default_get(EGW_ESP_DIR_IN) == EGW_ESP_DEFAULT_AUTO, "back to auto");
	OK("esp policy default out bypass");
	OK("esp policy default out auto");

	/* make-before-break rekey */
	OK("esp sa add 0x400 out aead aes-128-gcm key " KEY128B TUN4);
	OK("esp policy add out src 10.4.0.0/16 dst 0.0.0.0/0 protect 4294967295");
	ESP_BAD("esp sa replace out 4294967295");
	ESP_BAD("esp sa replace out 4294967295 0x999"); /* no such SA */
	ESP_BAD("esp sa replace out 0x400 4294967295"); /* nothing protects with 0x400 */
	ESP_BAD("esp sa replace up 4294967295 0x400");
	OK("esp sa replace out 4294967295 0x400");
	ESP_BAD("esp sa del 0x400 out"); /* the policy moved to it */
	OK("esp sa del 4294967295");     /* the old one is free */
	OK("esp sa add 4294967295 out aead aes-256-gcm key " KEY256
	   " mode tunnel src 2001:db8::1 dst 2001:db8::2 natt lifetime packets 0 5");
	OK("esp sa replace out 0x400 4294967295");
	OK("esp sa del 0x400 out");
	/* the state file keeps every key used; prune drops those no SA uses */
	OK("esp state-prune");
	ESP_BAD("esp state-prune now");

	/* forwarding with SAs and policies: the ESP stage is active (the
	 * null frames are dropped before it) and the identity holds */
	OK("set fwd gateway");
	OK("start");
	OK("esp sa add 0x300 out aead aes-128-gcm key " KEY128 TUN4);
	OK("esp policy add out src 10.3.0.0/16 dst 0.0.0.0/0 protect 0x300");
	rte_delay_us_sleep(30 * 1000);
	OK("show esp stats");
	OK("stop");
	check_identity();

	/* leave no SA or policy for the rest of the test */
	while (egw_esp_policy_walk(EGW_ESP_DIR_OUT, first_policy, &id) != 0) {
		snprintf(line, sizeof(line), "esp policy del out %u", id);
		if (run(line) != 0)
			break;
	}
	while (egw_esp_policy_walk(EGW_ESP_DIR_IN, first_policy, &id) != 0) {
		snprintf(line, sizeof(line), "esp policy del in %u", id);
		if (run(line) != 0)
			break;
	}
	OK("esp sa del 0x300");
	OK("esp sa del 0x200");
	OK("esp sa del 4294967295");
	CHECK(egw_esp_sa_count(EGW_ESP_DIR_OUT) == 0 && egw_esp_sa_count(EGW_ESP_DIR_IN) == 0,
	      "every SA deleted");
	unlink(state);
	snprintf(line, sizeof(line), "%s/other", dir);
	unlink(line);
	rmdir(dir);
}

/* ---- pppoe and ppp commands ------------------------------------------------- */

/* What the pppoe and ppp commands can change: the configuration, the
 * service names and pools, the number of users and of sessions. */
struct pppoe_snap {
	struct egw_pppoe_config c;
	char lists[2048];
	unsigned int sessions;
};

static void
snap_service(const char *name, void *arg)
{
	struct pppoe_snap *s = arg;
	size_t n = strlen(s->lists);

	snprintf(s->lists + n, sizeof(s->lists) - n, "s:%s;", name);
}

static void
snap_pool(const char *prefix, unsigned int used, unsigned int size, void *arg)
{
	struct pppoe_snap *s = arg;
	size_t n = strlen(s->lists);

	snprintf(s->lists + n, sizeof(s->lists) - n, "p:%s:%u:%u;", prefix, used, size);
}

static void
pppoe_snap_take(struct pppoe_snap *s)
{
	unsigned int count[4];

	memset(s, 0, sizeof(*s));
	egw_pppoe_config_get(&s->c);
	egw_pppoe_services_walk(snap_service, s);
	egw_pppoe_pools_walk(snap_pool, s);
	s->sessions = egw_pppoe_session_count(count);
}

static bool
pppoe_snap_same(const struct pppoe_snap *a, const struct pppoe_snap *b)
{
	const struct egw_pppoe_config *x = &a->c, *y = &b->c;

	return strcmp(x->ac_name, y->ac_name) == 0 && x->nb_services == y->nb_services &&
	       x->nb_pools4 == y->nb_pools4 && x->nb_pools6 == y->nb_pools6 &&
	       x->nb_users == y->nb_users && x->dns[0] == y->dns[0] && x->dns[1] == y->dns[1] &&
	       x->max_sessions == y->max_sessions && x->max_per_mac == y->max_per_mac &&
	       x->mru == y->mru && x->mss_mode == y->mss_mode && x->mss_value == y->mss_value &&
	       x->keepalive_s == y->keepalive_s && x->keepalive_misses == y->keepalive_misses &&
	       x->auth == y->auth && strcmp(a->lists, b->lists) == 0 && a->sessions == b->sessions;
}

/* A bad pppoe/ppp line: fails, and the PPPoE state is as before. */
#define PPPOE_BAD(line)                                                                   \
	do {                                                                              \
		struct pppoe_snap p0_, p1_;                                               \
		pppoe_snap_take(&p0_);                                                    \
		CHECK(run(line) < 0, "'%s' should fail", line);                           \
		pppoe_snap_take(&p1_);                                                    \
		CHECK(pppoe_snap_same(&p0_, &p1_), "'%s' changed the PPPoE state", line); \
	} while (0)

static struct egw_pppoe_config pc;

static const struct egw_pppoe_config *
pconf(void)
{
	egw_pppoe_config_get(&pc);
	return &pc;
}

static rte_be32_t
ip4(const char *s)
{
	rte_be32_t a = 0;

	inet_pton(AF_INET, s, &a);
	return a;
}

#define NAME65 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

static void
test_pppoe_commands(void)
{
	struct pppoe_snap s;

	CHECK(egw.pppoe, "PPPoE initialised");
	OK("help pppoe");
	OK("show pppoe sessions");
	OK("show pppoe sessions detail");
	OK("show pppoe stats");
	BAD("show pppoe");
	BAD("show pppoe nonsense");
	BAD("show pppoe sessions details");
	BAD("show pppoe stats extra");

	/* ac-name */
	OK("pppoe ac-name edge-test-1");
	CHECK(strcmp(pconf()->ac_name, "edge-test-1") == 0, "ac-name set");
	PPPOE_BAD("pppoe ac-name");
	PPPOE_BAD("pppoe ac-name two words");
	PPPOE_BAD("pppoe ac-name " NAME65);
	CHECK(strcmp(pconf()->ac_name, "edge-test-1") == 0, "ac-name kept");

	/* service names */
	OK("pppoe service-name add internet");
	OK("pppoe service-name add voip");
	CHECK(pconf()->nb_services == 2, "2 services");
	PPPOE_BAD("pppoe service-name add internet"); /* exists */
	PPPOE_BAD("pppoe service-name del nosuch");
	PPPOE_BAD("pppoe service-name add");
	PPPOE_BAD("pppoe service-name put tv");
	PPPOE_BAD("pppoe service-name add " NAME65);
	PPPOE_BAD("pppoe service-name add tv extra");
	OK("pppoe service-name del voip");
	CHECK(pconf()->nb_services == 1, "1 service left");
	pppoe_snap_take(&s);
	CHECK(strcmp(s.lists, "s:internet;") == 0, "the service left is internet: %s", s.lists);

	/* pools */
	OK("pppoe pool add 100.64.0.0/24");
	OK("pppoe pool add 2001:db8:100::/48");
	CHECK(pconf()->nb_pools4 == 1 && pc.nb_pools6 == 1, "one pool of each family");
	PPPOE_BAD("pppoe pool add 100.64.0.128/25"); /* overlaps */
	PPPOE_BAD("pppoe pool add 100.65.0.0/31");   /* too long */
	PPPOE_BAD("pppoe pool add 10.0.0.0/7");      /* too short */
	PPPOE_BAD("pppoe pool add 2001:db8:200::/64");
	PPPOE_BAD("pppoe pool add 300.0.0.0/24");
	PPPOE_BAD("pppoe pool add 100.66.0.0");
	PPPOE_BAD("pppoe pool add 100.66.0.0/x");
	PPPOE_BAD("pppoe pool del 10.9.0.0/24");
	PPPOE_BAD("pppoe pool add");
	PPPOE_BAD("pppoe pool grow 100.66.0.0/24");
	OK("pppoe pool add 100.66.0.0/28");
	CHECK(pconf()->nb_pools4 == 2, "two IPv4 pools");
	OK("pppoe pool del 100.66.0.0/28");
	CHECK(pconf()->nb_pools4 == 1, "one IPv4 pool again");

	/* dns */
	OK("pppoe dns 192.0.2.53 192.0.2.54");
	CHECK(pconf()->dns[0] == ip4("192.0.2.53") && pc.dns[1] == ip4("192.0.2.54"), "dns two");
	OK("pppoe dns 198.51.100.1");
	CHECK(pconf()->dns[0] == ip4("198.51.100.1") && pc.dns[1] == 0, "dns one");
	PPPOE_BAD("pppoe dns 0.0.0.0");
	PPPOE_BAD("pppoe dns 255.255.255.255");
	PPPOE_BAD("pppoe dns 224.0.0.1");
	PPPOE_BAD("pppoe dns 192.0.2");
	PPPOE_BAD("pppoe dns 2001:db8::53");
	PPPOE_BAD("pppoe dns 192.0.2.1 192.0.2.2 192.0.2.3");
	PPPOE_BAD("pppoe dns 192.0.2.1 nonsense");
	PPPOE_BAD("pppoe dns");
	OK("pppoe dns none");
	CHECK(pconf()->dns[0] == 0 && pc.dns[1] == 0, "dns none");

	/* limits */
	OK("pppoe limit sessions 1000");
	OK("pppoe limit per-mac 4");
	CHECK(pconf()->max_sessions == 1000 && pc.max_per_mac == 4, "limits 1000/4");
	PPPOE_BAD("pppoe limit sessions 0");
	PPPOE_BAD("pppoe limit sessions 65535");
	PPPOE_BAD("pppoe limit per-mac 0");
	PPPOE_BAD("pppoe limit per-mac x");
	PPPOE_BAD("pppoe limit both 3");
	PPPOE_BAD("pppoe limit sessions");
	PPPOE_BAD("pppoe limit sessions 5 6");

	/* mru, mss-clamp, keepalive */
	OK("pppoe mru 1480");
	CHECK(pconf()->mru == 1480, "mru 1480");
	PPPOE_BAD("pppoe mru 575");
	PPPOE_BAD("pppoe mru 9001");
	PPPOE_BAD("pppoe mru big");
	PPPOE_BAD("pppoe mru");
	OK("pppoe mss-clamp 1400");
	CHECK(pconf()->mss_mode == EGW_PPPOE_MSS_FIXED && pc.mss_value == 1400, "mss 1400");
	OK("pppoe mss-clamp off");
	CHECK(pconf()->mss_mode == EGW_PPPOE_MSS_OFF, "mss off");
	PPPOE_BAD("pppoe mss-clamp 535");
	PPPOE_BAD("pppoe mss-clamp 8961");
	PPPOE_BAD("pppoe mss-clamp sometimes");
	PPPOE_BAD("pppoe mss-clamp");
	OK("pppoe mss-clamp auto");
	CHECK(pconf()->mss_mode == EGW_PPPOE_MSS_AUTO, "mss auto");
	OK("pppoe keepalive 10 5");
	CHECK(pconf()->keepalive_s == 10 && pc.keepalive_misses == 5, "keepalive 10/5");
	PPPOE_BAD("pppoe keepalive 10 0");
	PPPOE_BAD("pppoe keepalive 10 256");
	PPPOE_BAD("pppoe keepalive 3601 3");
	PPPOE_BAD("pppoe keepalive 10");
	PPPOE_BAD("pppoe keepalive -1 3");
	OK("pppoe keepalive 0 3");
	CHECK(pconf()->keepalive_s == 0, "keepalive off");
	PPPOE_BAD("pppoe");
	PPPOE_BAD("pppoe frobnicate");

	/* ppp auth and users */
	OK("ppp auth chap");
	CHECK(pconf()->auth == EGW_PPPOE_AUTH_CHAP, "auth chap");
	PPPOE_BAD("ppp auth md5");
	PPPOE_BAD("ppp auth");
	PPPOE_BAD("ppp auth pap chap");
	OK("ppp auth none");
	CHECK(pconf()->auth == EGW_PPPOE_AUTH_NONE, "auth none");
	OK("ppp auth pap");
	OK("ppp user add alice s3cret");
	OK("ppp user add bob pw address 100.64.0.10");
	OK("ppp user add carol pw2 address 203.0.113.7"); /* in no pool: usable */
	CHECK(pconf()->nb_users == 3, "3 users");
	PPPOE_BAD("ppp user add erin pass#word"); /* would be cut at the '#' */
	PPPOE_BAD("ppp user add erin password # comment");
	PPPOE_BAD("pppoe ac-name ac#1");
	PPPOE_BAD("pppoe service-name add tv#2");
	PPPOE_BAD("ppp user add alice other");                 /* exists */
	PPPOE_BAD("ppp user add dave pw address 100.64.0.10"); /* bob's */
	PPPOE_BAD("ppp user add dave pw address 100.64.0");    /* syntax */
	PPPOE_BAD("ppp user add dave pw address 0.0.0.0");     /* not unicast */
	PPPOE_BAD("ppp user add dave pw address 224.1.1.1");   /* not unicast */
	PPPOE_BAD("ppp user add dave pw addr 100.64.0.11");    /* keyword */
	PPPOE_BAD("ppp user add dave pw address");             /* no value */
	PPPOE_BAD("ppp user add dave");                        /* no secret */
	PPPOE_BAD("ppp user add dave " NAME65);                /* secret too long */
	PPPOE_BAD("ppp user add " NAME65 " pw");               /* name too long */
	PPPOE_BAD("ppp user del nosuch");
	PPPOE_BAD("ppp user del");
	PPPOE_BAD("ppp user frob dave");
	PPPOE_BAD("ppp");
	PPPOE_BAD("ppp chap");
	OK("ppp user del carol");
	CHECK(pconf()->nb_users == 2, "2 users");

	/* sessions: none here (net_null frames are not PPPoE) */
	PPPOE_BAD("pppoe session clear 5");
	PPPOE_BAD("pppoe session clear 0");
	PPPOE_BAD("pppoe session clear 65535");
	PPPOE_BAD("pppoe session clear x");
	PPPOE_BAD("pppoe session clear");
	PPPOE_BAD("pppoe session drop 5");
	PPPOE_BAD("pppoe session clear 0x10");
	PPPOE_BAD("pppoe session clear 0x");
	OK("pppoe session clear all");
	OK("show config");
	OK("show pppoe stats");
}

/* The control path's transmit: through the ring of the worker that sends
 * for the port, while forwarding runs; kept in order while it is stopped. */
static void
test_control_tx(void)
{
	struct egw_worker *w = egw.workers[0];
	unsigned int i, cap = rte_ring_get_capacity(w->ctrl_tx_ring);
	/* its own pool: more frames than the ring holds */
	struct rte_mempool *mp =
		rte_pktmbuf_pool_create("test_ctrl_tx", cap + 128, 0, 0, 256, SOCKET_ID_ANY);
	uint64_t tx0, drop0, wtx0, n_full;

	CHECK(mp != NULL, "mbuf pool");
	if (mp == NULL)
		return;
	OK("set fwd io");
	tx0 = EGW_CNT_READ(egw.ctrl.tx);
	drop0 = EGW_CNT_READ(egw.ctrl.tx_drop);
	wtx0 = EGW_CNT_READ(w->stats.ctrl_tx);

	/* no such port: freed and counted */
	rte_spinlock_lock(&egw.ctrl_lock);
	egw_control_tx(7, rte_pktmbuf_alloc(mp), NULL);
	rte_spinlock_unlock(&egw.ctrl_lock);
	CHECK(EGW_CNT_READ(egw.ctrl.tx_drop) == drop0 + 1, "control TX to no port: dropped");

	/* forwarding stopped: frames wait in the ring; more than it holds
	 * are freed and counted */
	rte_spinlock_lock(&egw.ctrl_lock);
	for (i = 0; i < cap + 77; i++) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(mp);

		if (m == NULL)
			break;
		rte_pktmbuf_append(m, 60);
		egw_control_tx((uint16_t)(i % 2), m, NULL);
	}
	rte_spinlock_unlock(&egw.ctrl_lock);
	CHECK(i == cap + 77, "%u mbufs", cap + 77);
	n_full = EGW_CNT_READ(egw.ctrl.tx_drop) - drop0 - 1;
	CHECK(EGW_CNT_READ(egw.ctrl.tx) - tx0 == cap + 77 - n_full && n_full == 77,
	      "a full ring (%u frames) refuses the rest: %lu made, %lu dropped", cap,
	      (unsigned long)(EGW_CNT_READ(egw.ctrl.tx) - tx0), (unsigned long)n_full);
	CHECK(EGW_CNT_READ(w->stats.ctrl_tx) == wtx0, "nothing sent while stopped");
	CHECK(rte_ring_count(w->ctrl_tx_ring) == cap, "%u frames wait", cap);

	/* forwarding: the worker sends them on its own TX queue */
	OK("start");
	for (i = 0; i < 300 && EGW_CNT_READ(w->stats.ctrl_tx) < wtx0 + cap; i++)
		rte_delay_us_sleep(10 * 1000);
	CHECK(EGW_CNT_READ(w->stats.ctrl_tx) + EGW_CNT_READ(w->stats.ctrl_tx_drop) == wtx0 + cap,
	      "the worker sent what waited: %lu", (unsigned long)EGW_CNT_READ(w->stats.ctrl_tx));
	CHECK(rte_ring_count(w->ctrl_tx_ring) == 0, "ring empty");
	OK("stop");
	check_identity();

	/* left in the ring at exit: sent by the main lcore (egw_app_stop) */
	rte_spinlock_lock(&egw.ctrl_lock);
	for (i = 0; i < 5; i++) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(mp);

		if (m != NULL) {
			rte_pktmbuf_append(m, 60);
			egw_control_tx(1, m, NULL);
		}
	}
	rte_spinlock_unlock(&egw.ctrl_lock);
	CHECK(rte_ring_count(w->ctrl_tx_ring) == 5, "5 frames wait");
}

int
main(int argc, char **argv)
{
	char longline[700], pcap_path[] = "/tmp/egw_test_cli_XXXXXX";
	uint64_t gen = 0;
	struct egw_qstats s;
	int fd;

	if (rte_eal_init(argc, argv) < 0) {
		printf("EAL init failed\n");
		return 1;
	}
	egw_opts_default(&egw.opts);
	egw.opts.mbufs = 4096;
	if (egw_app_init() < 0) {
		printf("app init failed\n");
		return 1;
	}
	CHECK(egw.nb_ports == 2 && egw.nb_workers == 1, "2 ports, 1 worker");

	OK("help");
	OK("help ports");
	OK("help all");
	BAD("help nosuchtopic");
	OK("show config");

	/* port role: bad input leaves the role alone */
	OK("port role 0 access");
	CHECK(egw.ports[0].role == EGW_ROLE_ACCESS, "role access");
	BAD("port role 0 sideways");
	CHECK(egw.ports[0].role == EGW_ROLE_ACCESS, "role unchanged after bad role");
	BAD("port role 5 uplink");
	BAD("port role x uplink");
	BAD("port role 0");
	OK("port role 1 uplink");
	CHECK(egw.ports[1].role == EGW_ROLE_UPLINK, "role uplink");

	/* set fwd */
	OK("set fwd mac");
	CHECK(egw.engine == &egw_fwd_mac, "engine mac");
	BAD("set fwd nosuch");
	BAD("set fwd io extra");
	BAD("set fwd replay /nonexistent/x.pcap");
	BAD("set fwd replay");
	CHECK(egw.engine == &egw_fwd_mac, "engine unchanged after bad set fwd");

	/* show/clear */
	OK("show port stats all");
	OK("show port stats 1");
	BAD("show port stats 2");
	BAD("show port stats abc");
	BAD("show port stats -1");
	OK("show port xstats 0");
	BAD("show port xstats all");
	OK("clear port stats all");
	OK("clear port stats 0");
	BAD("clear port stats 7");
	OK("show fwd stats");
	BAD("show fwd nonsense");

	/* syntax errors */
	BAD("nosuch command");
	BAD("show");
	BAD("start now");
	memset(longline, 'x', sizeof(longline) - 1);
	longline[sizeof(longline) - 1] = '\0';
	CHECK(run(longline) == -E2BIG, "long line");

	/* start/stop and what is refused while running */
	OK("set fwd io");
	OK("start");
	CHECK(__atomic_load_n(&egw.fwd_running, __ATOMIC_RELAXED) == 1, "running");
	BAD("start");
	BAD("set fwd mac");
	CHECK(egw.engine == &egw_fwd_io, "engine unchanged while running");
	BAD("port role 1 access");
	CHECK(egw.ports[1].role == EGW_ROLE_UPLINK, "role unchanged while running");
	rte_delay_us_sleep(100 * 1000);
	OK("show fwd stats");
	OK("stop");
	BAD("stop");
	egw_qstats_sum(0, &s);
	CHECK(s.rx > 0, "net_null frames received (%lu)", (unsigned long)s.rx);
	check_identity();

	/* gateway on net_null frames (64 bytes, ethertype 0: an 802.3 frame of
	 * length 0): every one is classified and dropped, none forwarded */
	{
		struct egw_qstats before;

		egw_qstats_sum(0, &before);
		OK("set fwd gateway");
		OK("start");
		rte_delay_us_sleep(50 * 1000);
		OK("stop");
		egw_qstats_sum(0, &s);
		CHECK(s.rx > before.rx, "gateway received");
		CHECK(s.tx == before.tx, "gateway forwarded nothing");
		CHECK(s.drop[EGW_DROP_BAD_FRAME] - before.drop[EGW_DROP_BAD_FRAME] +
				      s.drop[EGW_DROP_OTHERHOST] -
				      before.drop[EGW_DROP_OTHERHOST] ==
			      s.rx - before.rx,
		      "gateway dropped every null frame as bad or otherhost");
		check_identity();
	}

	/* replay at a fixed rate on port 0 */
	fd = mkstemp(pcap_path);
	CHECK(fd >= 0 && write_pcap(pcap_path, 3) == 0, "write pcap");
	if (fd >= 0)
		close(fd);
	BAD("set fwd replay /nonexistent.pcap 1000");
	{
		char line[128];

		snprintf(line, sizeof(line), "set fwd replay %s 1000 port 0", pcap_path);
		OK(line);
		snprintf(line, sizeof(line), "set fwd replay %s 0", pcap_path);
		BAD(line);
		snprintf(line, sizeof(line), "set fwd replay %s 1000 port 9", pcap_path);
		BAD(line);
	}
	CHECK(egw.engine == &egw_fwd_replay, "engine replay");
	OK("show config");
	OK("start");
	rte_delay_us_sleep(300 * 1000);
	OK("stop");
	for (uint16_t i = 0; i < egw.nb_workers; i++)
		gen += EGW_CNT_READ(egw.workers[i]->stats.gen_tx);
	/* 1000 pps for 0.3 s: about 300, never a whole second's worth */
	CHECK(gen >= 150 && gen <= 600, "replay rate: %lu frames in 0.3 s at 1000 pps",
	      (unsigned long)gen);
	CHECK(EGW_CNT_READ(egw.workers[0]->stats.tx_out[1]) ==
		      EGW_CNT_READ(egw.workers[0]->stats.tx_out[1]),
	      "tx_out readable");
	check_identity();
	unlink(pcap_path);

	test_esp();
	test_pppoe_commands();
	test_control_tx();

	OK("quit");
	CHECK(__atomic_load_n(&egw.quit, __ATOMIC_RELAXED) == 1, "quit sets quit");

	{
		uint64_t wtx = EGW_CNT_READ(egw.workers[0]->stats.ctrl_tx);

		egw_app_stop();
		CHECK(EGW_CNT_READ(egw.workers[0]->stats.ctrl_tx) +
				      EGW_CNT_READ(egw.workers[0]->stats.ctrl_tx_drop) ==
			      wtx + 5,
		      "frames left for the stopped worker sent at exit");
		CHECK(!egw.launched && egw.workers[0]->ctrl_tx_ring == NULL, "rings freed");
	}
	egw_app_fini();
	rte_eal_cleanup();
	printf("%d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
