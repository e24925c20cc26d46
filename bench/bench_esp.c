/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Cost of ESP (lib/esp) on one core, AES-128-GCM, IPv4 in IPv4 tunnel mode
 * and IPv4 transport mode, against raw IPsec-MB AES-128-GCM on the very
 * buffer sizes the library encrypts, measured in the same run.
 *
 * Cases, in bursts of 32:
 *  - out N: clear UDP/IPv4 packets of N = 64, 512, 1400 IP bytes through
 *    egw_esp_outbound_lookup() + egw_esp_outbound_burst();
 *  - gso: 32 TCP super-packets of 65,000-byte frames, each one mbuf chain of
 *    2 KB segments (as net_pcap hands over a jumbo frame), segmented by the
 *    library so that every segment is a 1402-byte clear IP packet (the SA MTU
 *    is chosen for it: 1456 tunnel, 1436 transport, so that every full segment
 *    encrypts 1404 resp. 1384 bytes, as the 1400-byte packet does);
 *    "tso": the same with RTE_MBUF_F_TX_TCP_SEG and tso_segsz 1460 (the SA
 *    MTU clamps it to the same segments);
 *  - in N: ESP packets of N clear IP bytes through egw_esp_inbound_burst().
 *    They are made by the library's outbound path before the timed region,
 *    --in-set bursts at a time, with increasing sequence numbers (the window
 *    only slides), then decrypted a burst per call. The inbound SA has a key
 *    of its own (lib/esp refuses a key a live SA uses): before the timed
 *    region each packet is verified with the outbound key and sealed again
 *    for the inbound SA with IPsec-MB directly (tests/unit/esp/esp_peer.h).
 *
 * Timed (TSC, one pair around the library calls of each burst): outbound the
 * lookup and the burst call(s), including the library freeing a segmented
 * super-packet's chain; inbound the inbound call. Not timed: building the
 * packets from a template (fresh mbufs from the pool, data as a memcpy left
 * it: in L1/L2), zeroing struct egw_esp_res, freeing the output mbufs, the
 * QSBR quiescent report and egw_esp_service() (once per round).
 *
 * Baseline, same run, the same rounds (the library between the two, their
 * order swapped every round): raw IPsec-MB AES-128-GCM with a manager of the
 * same kind as the library's (alloc_mb_mgr + init_mb_mgr_auto), in place,
 * 12-byte nonce written per buffer, 8-byte AAD, 16-byte tag, on exactly the
 * lengths the library encrypts for the case (for gso, the lengths of all its
 * segments), over 32 buffers that stay in L1/L2, through
 *  - the burst job API (IMB_GET_NEXT_BURST, IMB_SUBMIT_BURST, flush), 32 jobs;
 *  - the direct API (IMB_AES128_GCM_ENC / _DEC), one call per buffer.
 * The ratio is taken against the faster of the two (the direct API on the
 * CPUs measured so far, and what the library runs for AES-GCM bursts), the
 * raw best case; the ratio against the burst API is printed beside it. For
 * reference a third figure, the direct API over the same buffers with the
 * data as many bytes into its cache line as the library's is (the ratio
 * stays against the aligned best case).
 * Encrypt for outbound, decrypt for inbound.
 *
 * Each case's first burst is checked (untimed): outputs all there, nothing
 * dropped, and the round trip through the inbound path gives back the clear
 * frame (gso: the TCP payload of the first super-packet, segment by segment).
 *
 * Targets (throughput of the library / raw at the same lengths, tunnel mode;
 * transport is held to the same for reference): outbound 1400 B >= 0.85,
 * gso >= 0.80, inbound 1400 B >= 0.85. Each is printed PASS or MISS; the exit
 * status is 0 either way: a benchmark measures.
 *
 * Usage: bench_esp [EAL args] [-- [--rounds N] [--bursts N] [--gso-bursts N]
 *                                 [--gso-pkts N] [--in-set N] [--case S]
 *                                 [--mode tunnel|transport] [--no-baseline]]
 *   --rounds N      rounds; medians are over them (default 51)
 *   --bursts N      bursts per case per round (default 64)
 *   --gso-bursts N  the same for the gso cases (default 2)
 *   --gso-pkts N    super-packets per gso burst (default 32: 2 MB, more than L2)
 *   --in-set N      inbound: bursts encrypted ahead, then decrypted (default 8)
 *   --case S        run only the cases whose "mode name" contains S ("tunnel out
 *                   1400", "gso", "in 64")
 *   --no-baseline   skip the raw IPsec-MB runs (for profiling the library)
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <intel-ipsec-mb.h>
#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_rcu_qsbr.h>
#include <rte_tcp.h>
#include <rte_udp.h>

#include "egw_esp.h"
#include "bench_common.h"
#include "../tests/unit/esp/esp_peer.h"

#define BURST 32
#define OUT_MAX (BURST * EGW_ESP_MAX_SEGS) /* outputs of one burst of super-packets */
#define GSO_FRAME 65000
#define TSO_SEGSZ 1460
#define MTU_TUNNEL 1456    /* 20 outer + 16 ESP/IV + 1404 encrypted + 16 ICV */
#define MTU_TRANSPORT 1436 /* 20 IP + 16 ESP/IV + 1384 encrypted + 16 ICV */
#define SPI_TUNNEL 0x1001
#define SPI_TRANSPORT 0x2001
#define RAW_BUF 2048 /* room per raw-baseline buffer (largest ESP payload 1404) */
#define L2_LEN RTE_ETHER_HDR_LEN
#define ESP_OVERHEAD 52 /* outer/kept IPv4 20 + ESP header 8 + IV 8 + ICV 16 */
#define TARGET_OUT 0.85
#define TARGET_GSO 0.80
#define TARGET_IN 0.85

enum kind { K_OUT, K_GSO, K_TSO, K_IN };

struct bcase {
	const char *name;
	enum kind kind;
	enum egw_esp_mode mode;
	uint32_t ip_len; /* clear IP packet; gso: of the super-packet */
	double target;   /* raw/library throughput ratio to reach; 0 = none */
	uint32_t n_in;   /* input packets per burst: 32, gso: --gso-pkts */
	/* from the check pass */
	uint32_t n_esp;       /* ESP packets per burst */
	uint64_t clear_bytes; /* clear IP bytes per burst */
	uint64_t esp_bytes;   /* ESP IP bytes per burst */
	uint32_t enc_len[OUT_MAX];
	double ratio; /* library throughput / raw, from the medians */
	/* per round: ns per burst */
	double *t_lib, *t_raw, *t_direct, *t_ratio, *t_dir_off;
	unsigned int lib_off; /* where the library's encrypted data starts, mod 64 */
};

static struct bcase cases[] = {
	{"out 64", K_OUT, EGW_ESP_MODE_TUNNEL, 64, 0},
	{"out 512", K_OUT, EGW_ESP_MODE_TUNNEL, 512, 0},
	{"out 1400", K_OUT, EGW_ESP_MODE_TUNNEL, 1400, TARGET_OUT},
	{"gso 64K chain", K_GSO, EGW_ESP_MODE_TUNNEL, GSO_FRAME - L2_LEN, TARGET_GSO},
	{"gso 64K tso", K_TSO, EGW_ESP_MODE_TUNNEL, GSO_FRAME - L2_LEN, TARGET_GSO},
	{"in 64", K_IN, EGW_ESP_MODE_TUNNEL, 64, 0},
	{"in 512", K_IN, EGW_ESP_MODE_TUNNEL, 512, 0},
	{"in 1400", K_IN, EGW_ESP_MODE_TUNNEL, 1400, TARGET_IN},
	{"out 64", K_OUT, EGW_ESP_MODE_TRANSPORT, 64, 0},
	{"out 512", K_OUT, EGW_ESP_MODE_TRANSPORT, 512, 0},
	{"out 1400", K_OUT, EGW_ESP_MODE_TRANSPORT, 1400, TARGET_OUT},
	{"gso 64K chain", K_GSO, EGW_ESP_MODE_TRANSPORT, GSO_FRAME - L2_LEN, TARGET_GSO},
	{"gso 64K tso", K_TSO, EGW_ESP_MODE_TRANSPORT, GSO_FRAME - L2_LEN, TARGET_GSO},
	{"in 64", K_IN, EGW_ESP_MODE_TRANSPORT, 64, 0},
	{"in 512", K_IN, EGW_ESP_MODE_TRANSPORT, 512, 0},
	{"in 1400", K_IN, EGW_ESP_MODE_TRANSPORT, 1400, TARGET_IN},
};

static const uint8_t key[EGW_ESP_KEY_MAX] = {
	0x4c, 0x80, 0xcd, 0xef, 0xbb, 0x5d, 0x10, 0xda, 0x90, 0x6a,
	0xc7, 0x3c, 0x36, 0x13, 0xa6, 0x34, 0x2e, 0x44, 0x3b, 0x68, /* key, then salt */
};

static struct rte_mempool *pool;
static struct rte_rcu_qsbr *qs;
static struct egw_esp_ctx *ctx;
static char err[256];
static uint64_t bad;           /* calls that did not do what the bench expects */
static struct esp_peers peers; /* re-seals outbound packets for the inbound SAs */

/* raw baseline */
static IMB_MGR *raw_mgr;
static struct gcm_key_data raw_key __rte_cache_aligned;
static uint8_t *raw_buf[BURST]; /* 64-byte aligned, 64 bytes longer than RAW_BUF */
static uint8_t raw_iv[BURST][12] __rte_cache_aligned;
static uint8_t raw_aad[BURST][8];
static uint8_t raw_tag[BURST][16];
static uint64_t raw_seq = 1;

static struct rte_mbuf *outs[OUT_MAX];

/* ---- frames --------------------------------------------------------------- */

static uint8_t *
frame_l2(uint8_t *buf)
{
	struct rte_ether_hdr *eh = (struct rte_ether_hdr *)buf;

	eh->dst_addr = (struct rte_ether_addr){{0x02, 0, 0, 0, 0, 0xb}};
	eh->src_addr = (struct rte_ether_addr){{0x02, 0, 0, 0, 0, 0xa}};
	eh->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	return buf + L2_LEN;
}

static void
frame_ip(uint8_t *p, uint32_t ip_len, uint8_t proto, enum egw_esp_mode mode)
{
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)p;

	memset(ip, 0, sizeof(*ip));
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->total_length = rte_cpu_to_be_16((uint16_t)ip_len);
	ip->packet_id = rte_cpu_to_be_16(0x1234);
	ip->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);
	ip->time_to_live = 64;
	ip->next_proto_id = proto;
	/* tunnel traffic goes to 10.0.1.0/24, transport traffic to 10.0.2.0/24 */
	ip->src_addr = rte_cpu_to_be_32(RTE_IPV4(10, 0, 0, 1));
	ip->dst_addr = rte_cpu_to_be_32(RTE_IPV4(10, 0, mode == EGW_ESP_MODE_TUNNEL ? 1 : 2, 2));
	ip->hdr_checksum = rte_ipv4_cksum(ip);
}

/* UDP/IPv4 frame of ip_len IP bytes; returns the frame length. */
static uint32_t
build_udp(uint8_t *buf, uint32_t ip_len, enum egw_esp_mode mode)
{
	uint8_t *p = frame_l2(buf);
	struct rte_udp_hdr *u = (struct rte_udp_hdr *)(p + sizeof(struct rte_ipv4_hdr));
	uint32_t i, l4 = ip_len - (uint32_t)sizeof(struct rte_ipv4_hdr);

	frame_ip(p, ip_len, IPPROTO_UDP, mode);
	u->src_port = rte_cpu_to_be_16(5000);
	u->dst_port = rte_cpu_to_be_16(6000);
	u->dgram_len = rte_cpu_to_be_16((uint16_t)l4);
	u->dgram_cksum = 0;
	for (i = sizeof(*u); i < l4; i++)
		((uint8_t *)u)[i] = (uint8_t)(i * 7 + (i >> 8));
	return L2_LEN + ip_len;
}

/* TCP/IPv4 frame of frame_len bytes (a super-packet); returns frame_len. */
static uint32_t
build_tcp(uint8_t *buf, uint32_t frame_len, enum egw_esp_mode mode)
{
	uint8_t *p = frame_l2(buf);
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)p;
	struct rte_tcp_hdr *th = (struct rte_tcp_hdr *)(p + sizeof(*ip));
	uint32_t i, ip_len = frame_len - L2_LEN, l4 = ip_len - (uint32_t)sizeof(*ip);

	frame_ip(p, ip_len, IPPROTO_TCP, mode);
	memset(th, 0, sizeof(*th));
	th->src_port = rte_cpu_to_be_16(40000);
	th->dst_port = rte_cpu_to_be_16(80);
	th->sent_seq = rte_cpu_to_be_32(1000);
	th->data_off = 5 << 4;
	th->tcp_flags = RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG;
	th->rx_win = rte_cpu_to_be_16(65535);
	for (i = sizeof(*th); i < l4; i++)
		((uint8_t *)th)[i] = (uint8_t)(i * 7 + (i >> 8));
	th->cksum = rte_ipv4_udptcp_cksum(ip, th);
	return frame_len;
}

/* n single-mbuf frames, copies of frame. */
static int
mk_flat(const uint8_t *frame, uint32_t len, struct rte_mbuf *m[], unsigned int n)
{
	unsigned int i;

	if (rte_pktmbuf_alloc_bulk(pool, m, n) != 0)
		return -1;
	for (i = 0; i < n; i++) {
		rte_memcpy(rte_pktmbuf_append(m[i], (uint16_t)len), frame, len);
		m[i]->l2_len = L2_LEN;
	}
	return 0;
}

/* A frame as one chain of mbufs filled to their tailroom (net_pcap's jumbo
 * RX: 2048 bytes each with the default mbuf size). */
static struct rte_mbuf *
mk_chain(const uint8_t *frame, uint32_t len, bool tso)
{
	struct rte_mbuf *head = NULL, *prev = NULL;
	uint32_t off = 0;

	while (off < len) {
		struct rte_mbuf *s = rte_pktmbuf_alloc(pool);
		uint32_t k;

		if (s == NULL) {
			rte_pktmbuf_free(head);
			return NULL;
		}
		k = RTE_MIN(len - off, (uint32_t)rte_pktmbuf_tailroom(s));
		rte_memcpy(rte_pktmbuf_append(s, (uint16_t)k), frame + off, k);
		if (head == NULL) {
			head = s;
		} else {
			prev->next = s;
			head->nb_segs++;
			head->pkt_len += k;
		}
		prev = s;
		off += k;
	}
	head->l2_len = L2_LEN;
	if (tso) {
		head->l3_len = sizeof(struct rte_ipv4_hdr);
		head->l4_len = sizeof(struct rte_tcp_hdr);
		head->ol_flags |=
			RTE_MBUF_F_TX_TCP_SEG | RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM;
		head->tso_segsz = TSO_SEGSZ;
	}
	return head;
}

static int
mk_chains(const uint8_t *frame, uint32_t len, bool tso, struct rte_mbuf *m[], unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		m[i] = mk_chain(frame, len, tso);
		if (m[i] == NULL) {
			rte_pktmbuf_free_bulk(m, i);
			return -1;
		}
	}
	return 0;
}

/* ---- SAs and policies ------------------------------------------------------ */

/* Outbound and inbound SA with one SPI (a loopback pair), each with a PROTECT
 * policy for the mode's destination prefix. Each SA has a key of its own;
 * reseal() turns the outbound SA's packets into the inbound SA's. */
static int
sa_pair(uint32_t spi, enum egw_esp_mode mode, uint16_t mtu)
{
	uint8_t out_key[EGW_ESP_KEY_MAX], in_key[EGW_ESP_KEY_MAX];
	struct egw_esp_sa_conf c;
	struct egw_esp_policy p;
	int d, rc;

	memcpy(out_key, key, sizeof(out_key));
	/* a key per SA pair (0x1001 and 0x2001 differ in the second byte only:
	 * the first alone gave both pairs one key, which lib/esp now refuses) */
	out_key[0] ^= (uint8_t)spi;
	out_key[1] ^= (uint8_t)(spi >> 8);
	esp_peer_in_key(EGW_ESP_AES128_GCM, out_key, in_key);
	rc = esp_peer_add(&peers, spi, EGW_ESP_AES128_GCM, false, out_key, in_key);
	if (rc < 0)
		return rc;
	if (mode == EGW_ESP_MODE_TRANSPORT) {
		/* transport ESP ends at the packets' destination: edgegw's own */
		struct egw_esp_addr a = {.family = AF_INET, .a = {10, 0, 2, 2}};

		rc = egw_esp_local_addr_add(&a);
		if (rc < 0) {
			fprintf(stderr, "bench_esp: local address: %d\n", rc);
			return rc;
		}
	}
	for (d = 0; d < 2; d++) {
		memset(&c, 0, sizeof(c));
		c.spi = spi;
		c.dir = (enum egw_esp_dir)d;
		c.mode = mode;
		c.aead = EGW_ESP_AES128_GCM;
		memcpy(c.key, d == EGW_ESP_DIR_OUT ? out_key : in_key, sizeof(c.key));
		c.key_len = (uint8_t)egw_esp_aead_key_len(c.aead);
		c.mtu = mtu;
		if (mode == EGW_ESP_MODE_TUNNEL) {
			c.tun_src.family = AF_INET;
			memcpy(c.tun_src.a, (const uint8_t[]){192, 0, 2, 1}, 4);
			c.tun_dst.family = AF_INET;
			memcpy(c.tun_dst.a, (const uint8_t[]){192, 0, 2, 2}, 4);
		}
		rc = egw_esp_sa_add(&c, err, sizeof(err));
		if (rc < 0) {
			fprintf(stderr, "bench_esp: SA 0x%x: %s\n", spi, err);
			return rc;
		}
		memset(&p, 0, sizeof(p));
		p.dir = (enum egw_esp_dir)d;
		p.family = AF_INET;
		p.src.addr.family = AF_INET;
		p.dst.addr.family = AF_INET;
		memcpy(p.dst.addr.a,
		       (const uint8_t[]){10, 0, mode == EGW_ESP_MODE_TUNNEL ? 1 : 2, 0}, 4);
		p.dst.len = 24;
		p.proto = -1;
		p.action = EGW_ESP_PROTECT;
		p.spi = spi;
		rc = egw_esp_policy_add(&p, -1, err, sizeof(err));
		if (rc < 0) {
			fprintf(stderr, "bench_esp: policy for SA 0x%x: %s\n", spi, err);
			return rc;
		}
	}
	return 0;
}

/* ---- library calls --------------------------------------------------------- */

static uint32_t
res_drops(const struct egw_esp_res *res, char *why, size_t len)
{
	uint32_t n = 0;
	int i;

	why[0] = '\0';
	for (i = 0; i < EGW_ESP_DROP_MAX; i++)
		if (res->drop[i] != 0) {
			n += res->drop[i];
			snprintf(why, len, "%s", egw_esp_drop_name((enum egw_esp_drop)i));
		}
	return n;
}

/* Outbound lookup + burst of pkts[0..n); outputs in outs[]. Returns their
 * number; *cycles = TSC cycles of the library calls. */
static uint32_t
outbound(struct rte_mbuf *pkts[], uint16_t n, uint64_t *cycles)
{
	struct egw_esp_sa *sa[BURST];
	struct egw_esp_res res;
	uint16_t np, done = 0;
	uint32_t total = 0;
	uint64_t t0, t1;
	char why[64];

	memset(&res, 0, sizeof(res));
	t0 = rte_rdtsc_precise();
	np = egw_esp_outbound_lookup(ctx, pkts, n, sa, &res);
	while (done < np) {
		uint16_t k =
			egw_esp_outbound_burst(ctx, &sa[done], &pkts[done], np - done, &outs[total],
					       (uint16_t)(OUT_MAX - total), &res);

		total += res.n_out;
		done += k;
		if (k == 0)
			break;
	}
	t1 = rte_rdtsc_precise();
	*cycles = t1 - t0;
	if (np != n || done != np || res_drops(&res, why, sizeof(why)) != 0) {
		if (bad++ == 0)
			fprintf(stderr,
				"bench_esp: outbound: %u of %u protected, %u consumed, %s\n", np, n,
				done, why);
		if (np != n)
			rte_pktmbuf_free_bulk(&pkts[np], n - np);
		if (done != np)
			rte_pktmbuf_free_bulk(&pkts[done], np - done);
	}
	return total;
}

/* The far end, untimed: pkts[0..n) of the outbound SAs verified with their
 * keys and sealed again for the inbound SAs. 0, or -1 (counted in bad). */
static int
reseal(struct rte_mbuf *pkts[], uint32_t n)
{
	uint32_t i;
	int rc;

	for (i = 0; i < n; i++) {
		rc = esp_peer_reseal(&peers, pkts[i]);
		if (rc != 0) {
			if (bad++ == 0)
				fprintf(stderr, "bench_esp: re-seal of packet %u: %d\n", i, rc);
			return -1;
		}
	}
	return 0;
}

static uint16_t
inbound(struct rte_mbuf *pkts[], uint16_t n, uint64_t *cycles)
{
	struct egw_esp_res res;
	uint64_t t0, t1;
	uint16_t k;
	char why[64];

	memset(&res, 0, sizeof(res));
	t0 = rte_rdtsc_precise();
	k = egw_esp_inbound_burst(ctx, pkts, n, &res);
	t1 = rte_rdtsc_precise();
	*cycles = t1 - t0;
	if (k != n && bad++ == 0) {
		res_drops(&res, why, sizeof(why));
		fprintf(stderr, "bench_esp: inbound: %u of %u good (%s)\n", k, n, why);
	}
	return k;
}

/* ---- raw IPsec-MB baseline ------------------------------------------------- */

/* AES-128-GCM over len[0..n) with the burst API, 32 jobs at a time, in place
 * over the raw buffers. Returns the jobs completed. */
static unsigned int
raw_burst(bool enc, const uint32_t len[], unsigned int n)
{
	IMB_JOB *jobs[BURST];
	unsigned int off, i, k, got, done, ok = 0;

	for (off = 0; off < n; off += k) {
		k = RTE_MIN(n - off, (unsigned int)BURST);
		got = IMB_GET_NEXT_BURST(raw_mgr, k, jobs);
		if (got < k) {
			while (IMB_FLUSH_BURST(raw_mgr, BURST, jobs) != 0)
				;
			IMB_GET_NEXT_BURST(raw_mgr, k, jobs);
		}
		for (i = 0; i < k; i++) {
			IMB_JOB *j = jobs[i];

			memcpy(raw_iv[i] + 4, &raw_seq, 8);
			raw_seq++;
			j->src = raw_buf[i];
			j->dst = raw_buf[i];
			j->cipher_start_src_offset_in_bytes = 0;
			j->msg_len_to_cipher_in_bytes = len[off + i];
			j->hash_start_src_offset_in_bytes = 0;
			j->msg_len_to_hash_in_bytes = len[off + i];
			j->iv = raw_iv[i];
			j->iv_len_in_bytes = 12;
			j->auth_tag_output = raw_tag[i];
			j->auth_tag_output_len_in_bytes = 16;
			j->cipher_direction = enc ? IMB_DIR_ENCRYPT : IMB_DIR_DECRYPT;
			j->chain_order = enc ? IMB_ORDER_CIPHER_HASH : IMB_ORDER_HASH_CIPHER;
			j->cipher_mode = IMB_CIPHER_GCM;
			j->hash_alg = IMB_AUTH_AES_GMAC;
			j->enc_keys = &raw_key;
			j->dec_keys = &raw_key;
			j->key_len_in_bytes = 16;
			j->u.GCM.aad = raw_aad[i];
			j->u.GCM.aad_len_in_bytes = 8;
		}
		done = IMB_SUBMIT_BURST(raw_mgr, k, jobs);
		for (;;) {
			for (i = 0; i < done; i++)
				ok += jobs[i]->status == IMB_STATUS_COMPLETED;
			if (IMB_QUEUE_SIZE(raw_mgr) == 0)
				break;
			done = IMB_FLUSH_BURST(raw_mgr, BURST, jobs);
			if (done == 0)
				break;
		}
	}
	return ok;
}

/* The same lengths with the direct API, one call per buffer, the data
 * starting off bytes into the (64-byte aligned) buffers. */
static void
raw_direct(bool enc, const uint32_t len[], unsigned int n, unsigned int off)
{
	struct gcm_context_data gctx;
	unsigned int i, b;

	for (i = 0; i < n; i++) {
		uint8_t *d;

		b = i % BURST;
		d = raw_buf[b] + off;
		memcpy(raw_iv[b] + 4, &raw_seq, 8);
		raw_seq++;
		if (enc)
			IMB_AES128_GCM_ENC(raw_mgr, &raw_key, &gctx, d, d, len[i], raw_iv[b],
					   raw_aad[b], 8, raw_tag[b], 16);
		else
			IMB_AES128_GCM_DEC(raw_mgr, &raw_key, &gctx, d, d, len[i], raw_iv[b],
					   raw_aad[b], 8, raw_tag[b], 16);
	}
}

static int
raw_init(IMB_ARCH *arch)
{
	unsigned int i;

	raw_mgr = alloc_mb_mgr(0);
	if (raw_mgr == NULL)
		return -1;
	init_mb_mgr_auto(raw_mgr, arch);
	if (imb_get_errno(raw_mgr) != 0)
		return -1;
	IMB_AES128_GCM_PRE(raw_mgr, key, &raw_key);
	for (i = 0; i < BURST; i++) {
		/* 64 bytes more: the same buffers at the library's offset too */
		raw_buf[i] = rte_zmalloc(NULL, RAW_BUF + 64, RTE_CACHE_LINE_SIZE);
		if (raw_buf[i] == NULL)
			return -1;
		memcpy(raw_iv[i], key + 16, 4);
		memset(raw_aad[i], (int)i, sizeof(raw_aad[i]));
	}
	return 0;
}

static const char *
arch_name(IMB_ARCH a)
{
	switch (a) {
	case IMB_ARCH_NOAESNI: return "no-aesni";
	case IMB_ARCH_SSE: return "sse";
	case IMB_ARCH_AVX: return "avx";
	case IMB_ARCH_AVX2: return "avx2";
	case IMB_ARCH_AVX512: return "avx512";
	default: return "?";
	}
}

/* ---- cases ------------------------------------------------------------------ */

struct opts {
	unsigned int rounds;
	unsigned int bursts;
	unsigned int gso_bursts;
	unsigned int gso_pkts;
	unsigned int in_set;
	bool baseline;
};

static uint8_t tmpl[GSO_FRAME];
static uint32_t tmpl_len;
static struct rte_mbuf *in_set[64 * BURST];

static void
quiescent(void)
{
	rte_rcu_qsbr_quiescent(qs, 0);
}

static void
template_for(const struct bcase *c)
{
	if (c->kind == K_GSO || c->kind == K_TSO)
		tmpl_len = build_tcp(tmpl, GSO_FRAME, c->mode);
	else
		tmpl_len = build_udp(tmpl, c->ip_len, c->mode);
}

/* Build the inputs of one burst of case c in pkts[]. */
static int
make_inputs(const struct bcase *c, struct rte_mbuf *pkts[])
{
	if (c->kind == K_GSO || c->kind == K_TSO)
		return mk_chains(tmpl, tmpl_len, c->kind == K_TSO, pkts, c->n_in);
	return mk_flat(tmpl, tmpl_len, pkts, BURST);
}

/* n bursts of ESP packets of the template (inbound) into in_set[]. */
static int
make_esp(unsigned int n)
{
	struct rte_mbuf *pkts[BURST];
	unsigned int b;
	uint64_t cyc;

	for (b = 0; b < n; b++) {
		if (mk_flat(tmpl, tmpl_len, pkts, BURST) != 0)
			return -1;
		if (outbound(pkts, BURST, &cyc) != BURST) {
			bad++;
			return -1;
		}
		if (reseal(outs, BURST) != 0) {
			rte_pktmbuf_free_bulk(outs, BURST);
			return -1;
		}
		memcpy(&in_set[b * BURST], outs, BURST * sizeof(outs[0]));
		quiescent();
	}
	return 0;
}

/* Compare a decrypted frame with the template. */
static bool
same_frame(const struct rte_mbuf *m, const uint8_t *f, uint32_t len)
{
	uint8_t buf[2048];
	const void *p;

	if (m->pkt_len != len || len > sizeof(buf))
		return false;
	p = rte_pktmbuf_read(m, 0, len, buf);
	return p != NULL && memcmp(p, f, len) == 0;
}

/*
 * Check pass: one burst of case c, untimed, outputs verified by a round trip;
 * fills c->n_esp, the byte counts and the encrypted lengths. Returns 0 or -1.
 */
static int
check_case(struct bcase *c)
{
	struct rte_mbuf *pkts[BURST];
	uint32_t n, i, hdr = L2_LEN + 20 + 20;
	uint64_t cyc;
	int rc = 0;

	if (make_inputs(c, pkts) != 0)
		return -1;
	if (c->kind == K_IN) {
		/* encrypt one burst, decrypt it, compare */
		rte_pktmbuf_free_bulk(pkts, BURST);
		if (make_esp(1) != 0)
			return -1;
		memcpy(pkts, in_set, sizeof(pkts));
		n = BURST;
	} else {
		n = outbound(pkts, (uint16_t)c->n_in, &cyc);
		memcpy(pkts, outs, RTE_MIN(n, (uint32_t)BURST) * sizeof(pkts[0]));
	}
	c->n_esp = n;
	/* the encrypted part starts behind the (outer) IPv4 header, the ESP
	 * header and the IV: where in its cache line */
	c->lib_off = (unsigned int)((uintptr_t)rte_pktmbuf_mtod_offset(
					    c->kind == K_IN ? pkts[0] : outs[0], uint8_t *,
					    L2_LEN + 20 + 8 + 8) &
				    63);
	c->clear_bytes = (uint64_t)c->n_in * c->ip_len;
	c->esp_bytes = 0;
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = c->kind == K_IN ? pkts[i] : outs[i];

		const struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod_offset(m, const void *, L2_LEN);

		c->esp_bytes += m->pkt_len - L2_LEN;
		c->enc_len[i] = m->pkt_len - L2_LEN - ESP_OVERHEAD;
		/* the outer (tunnel) or rewritten (transport) IPv4 header */
		if (m->nb_segs != 1 || ip->next_proto_id != IPPROTO_ESP ||
		    rte_be_to_cpu_16(ip->total_length) != m->pkt_len - L2_LEN ||
		    rte_raw_cksum(ip, sizeof(*ip)) != 0xffff)
			rc = -1;
	}
	if (rc != 0) {
		fprintf(stderr, "bench_esp: %s: bad outer IPv4 header\n", c->name);
		rte_pktmbuf_free_bulk(c->kind == K_IN ? pkts : outs, n);
		return -1;
	}
	if (c->kind == K_GSO || c->kind == K_TSO) {
		/* decrypt the first super-packet's segments and reassemble its payload */
		uint32_t per = n / c->n_in, off = hdr, j = 0;
		struct rte_mbuf *seg[EGW_ESP_MAX_SEGS];

		if (n % c->n_in != 0 || per > EGW_ESP_MAX_SEGS) {
			fprintf(stderr, "bench_esp: %s: %u segments for %u super-packets\n",
				c->name, n, c->n_in);
			rte_pktmbuf_free_bulk(outs, n);
			return -1;
		}
		memcpy(seg, outs, per * sizeof(seg[0]));
		rte_pktmbuf_free_bulk(&outs[per], n - per);
		if (reseal(seg, per) != 0) {
			fprintf(stderr, "bench_esp: %s: segments do not verify\n", c->name);
			rte_pktmbuf_free_bulk(seg, per);
			return -1;
		}
		if (inbound(seg, (uint16_t)per, &cyc) != per) {
			fprintf(stderr, "bench_esp: %s: segments do not decrypt\n", c->name);
			return -1;
		}
		for (j = 0; j < per && rc == 0; j++) {
			uint32_t plen = seg[j]->pkt_len - hdr;
			const uint8_t *p = rte_pktmbuf_mtod(seg[j], const uint8_t *);

			if (seg[j]->nb_segs != 1 || off + plen > tmpl_len ||
			    memcmp(p + hdr, tmpl + off, plen) != 0 ||
			    (j + 1 < per && seg[j]->pkt_len - L2_LEN != 1402))
				rc = -1;
			off += plen;
		}
		if (off != tmpl_len)
			rc = -1;
		if (rc != 0)
			fprintf(stderr, "bench_esp: %s: reassembled payload differs\n", c->name);
		rte_pktmbuf_free_bulk(seg, per);
		return rc;
	}
	if (n != BURST) {
		fprintf(stderr, "bench_esp: %s: %u ESP packets for %u\n", c->name, n, BURST);
		rte_pktmbuf_free_bulk(outs, n);
		return -1;
	}
	/* make_esp() re-sealed the inbound case's packets already */
	if (c->kind != K_IN && reseal(pkts, BURST) != 0) {
		fprintf(stderr, "bench_esp: %s: ESP packets do not verify\n", c->name);
		rte_pktmbuf_free_bulk(pkts, BURST);
		return -1;
	}
	if (inbound(pkts, BURST, &cyc) != BURST) {
		fprintf(stderr, "bench_esp: %s: round trip failed\n", c->name);
		return -1;
	}
	for (i = 0; i < BURST; i++)
		if (!same_frame(pkts[i], tmpl, tmpl_len))
			rc = -1;
	if (rc != 0)
		fprintf(stderr, "bench_esp: %s: decrypted frame differs from the clear one\n",
			c->name);
	rte_pktmbuf_free_bulk(pkts, BURST);
	return rc;
}

/* Library, one round: TSC cycles of nb bursts. */
static uint64_t
round_lib(const struct bcase *c, unsigned int nb, unsigned int in_set_n)
{
	struct rte_mbuf *pkts[BURST];
	uint64_t sum = 0, cyc;
	unsigned int b, k, s;

	if (c->kind == K_IN) {
		for (b = 0; b < nb; b += k) {
			k = RTE_MIN(in_set_n, nb - b);
			if (make_esp(k) != 0)
				return 0;
			for (s = 0; s < k; s++) {
				uint16_t g = inbound(&in_set[s * BURST], BURST, &cyc);

				sum += cyc;
				rte_pktmbuf_free_bulk(&in_set[s * BURST], g);
				quiescent();
			}
		}
		return sum;
	}
	for (b = 0; b < nb; b++) {
		uint32_t n;

		if (make_inputs(c, pkts) != 0) {
			bad++;
			return 0;
		}
		n = outbound(pkts, (uint16_t)c->n_in, &cyc);
		sum += cyc;
		if (n != c->n_esp)
			bad++;
		rte_pktmbuf_free_bulk(outs, n);
		quiescent();
	}
	return sum;
}

/* Raw baseline, one round: TSC cycles of nb bursts' worth of crypto
 * (direct: the direct API, with the data off bytes into the buffers). */
static uint64_t
round_raw(const struct bcase *c, unsigned int nb, bool direct, unsigned int off)
{
	bool enc = c->kind != K_IN;
	uint64_t t0, t1, sum = 0;
	unsigned int b;

	for (b = 0; b < nb; b++) {
		t0 = rte_rdtsc_precise();
		if (direct) {
			raw_direct(enc, c->enc_len, c->n_esp, off);
		} else if (raw_burst(enc, c->enc_len, c->n_esp) != c->n_esp) {
			bad++;
		}
		t1 = rte_rdtsc_precise();
		sum += t1 - t0;
	}
	return sum;
}

static void
service(void)
{
	/* egw_esp_service() may wait for a grace period: not as an online reader */
	rte_rcu_qsbr_thread_offline(qs, 0);
	egw_esp_service();
	rte_rcu_qsbr_thread_online(qs, 0);
}

static const char *
mode_name(enum egw_esp_mode m)
{
	return m == EGW_ESP_MODE_TUNNEL ? "tunnel" : "transport";
}

static void
report(struct bcase *c, const struct opts *o)
{
	double ns_lib = median(c->t_lib, o->rounds), ns_raw = 0, ns_dir = 0, pr = 0, ratio = 0;
	double ns_off;
	double per_in = ns_lib / c->n_in, per_esp = ns_lib / c->n_esp;
	uint32_t enc_min = UINT32_MAX, enc_max = 0, i;
	uint64_t enc_bytes = 0;

	for (i = 0; i < c->n_esp; i++) {
		enc_bytes += c->enc_len[i];
		enc_min = RTE_MIN(enc_min, c->enc_len[i]);
		enc_max = RTE_MAX(enc_max, c->enc_len[i]);
	}
	printf("esp %-9s %-13s: %8.1f ns/pkt %6.3f Mpps %6.2f Gbps clear %6.2f Gbps ESP",
	       mode_name(c->mode), c->name, per_in, 1e3 / per_in,
	       (double)c->clear_bytes * 8 / ns_lib, (double)c->esp_bytes * 8 / ns_lib);
	if (c->n_esp != c->n_in)
		printf(" (%u ESP pkts/super-pkt: %.1f ns, %.3f Mpps per ESP pkt)",
		       c->n_esp / c->n_in, per_esp, 1e3 / per_esp);
	printf("\n");
	if (!o->baseline)
		return;
	ns_raw = median(c->t_raw, o->rounds);
	ns_dir = median(c->t_direct, o->rounds);
	pr = median(c->t_ratio, o->rounds);
	/* against the faster raw API (the library runs AES-GCM bursts with
	 * the direct calls) */
	ratio = RTE_MIN(ns_raw, ns_dir) / ns_lib;
	c->ratio = ratio;
	printf("    raw AES-128-GCM %s %u", c->kind == K_IN ? "dec" : "enc", enc_min);
	if (enc_max != enc_min)
		printf("..%u", enc_max);
	printf(" B: burst API %.1f ns/buf (%.2f Gbps of those bytes), direct API %.1f ns/buf;"
	       " library/raw %.2f (median per round %.2f; against the burst API %.2f)",
	       ns_raw / c->n_esp, (double)enc_bytes * 8 / ns_raw, ns_dir / c->n_esp, ratio, pr,
	       ns_raw / ns_lib);
	if (c->target > 0)
		printf(" target >= %.2f: %s", c->target, ratio >= c->target ? "PASS" : "MISS");
	printf("\n");
	/* the share of the gap that is where the data lies, not what the
	 * library does: the target stays against the aligned best case */
	ns_off = median(c->t_dir_off, o->rounds);
	printf("    for reference, direct API with the data %u bytes into a cache line, as the "
	       "library's: %.1f ns/buf; library/that %.2f\n",
	       c->lib_off, ns_off / c->n_esp, ns_lib > 0 ? ns_off / ns_lib : 0);
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"rounds", required_argument, NULL, 'r'},
		{"bursts", required_argument, NULL, 'b'},
		{"gso-bursts", required_argument, NULL, 'g'},
		{"gso-pkts", required_argument, NULL, 'p'},
		{"in-set", required_argument, NULL, 's'},
		{"case", required_argument, NULL, 'c'},
		{"mode", required_argument, NULL, 'm'},
		{"no-baseline", no_argument, NULL, 'n'},
		{NULL, 0, NULL, 0},
	};
	struct opts o = {.rounds = 51,
			 .bursts = 64,
			 .gso_bursts = 2,
			 .gso_pkts = BURST,
			 .in_set = 8,
			 .baseline = true};
	const char *only_case = NULL, *only_mode = NULL;
	char dir[64], path[128];
	bool run[RTE_DIM(cases)];
	IMB_ARCH arch = IMB_ARCH_NONE;
	double ns_per_cycle;
	unsigned int i, r;
	int ret, opt;

	ret = rte_eal_init(argc, argv);
	if (ret < 0) {
		fprintf(stderr, "bench_esp: rte_eal_init: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	argc -= ret;
	argv += ret;
	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (opt) {
		case 'r': o.rounds = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'b': o.bursts = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'g': o.gso_bursts = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'p': o.gso_pkts = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 's': o.in_set = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'c': only_case = optarg; break;
		case 'm': only_mode = optarg; break;
		case 'n': o.baseline = false; break;
		default:
			fprintf(stderr, "usage: bench_esp [EAL args] -- [--rounds N] [--bursts N] "
					"[--gso-bursts N] [--in-set N] [--case S] "
					"[--mode tunnel|transport] [--no-baseline]\n");
			return 2;
		}
	}
	if (o.rounds == 0 || o.bursts == 0 || o.gso_bursts == 0 || o.in_set == 0 ||
	    o.in_set * BURST > RTE_DIM(in_set) || o.gso_pkts == 0 || o.gso_pkts > BURST) {
		fprintf(stderr,
			"bench_esp: --rounds, --bursts, --gso-bursts >= 1, --in-set 1..%u, "
			"--gso-pkts 1..%d\n",
			(unsigned int)(RTE_DIM(in_set) / BURST), BURST);
		return 2;
	}

	/* super-packets of a burst (1024 mbufs) and their segments (1536), or
	 * the inbound set: 16k mbufs of 2 KB */
	pool = rte_pktmbuf_pool_create("bench_esp", 16383, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				       rte_socket_id());
	qs = rte_zmalloc(NULL, rte_rcu_qsbr_get_memsize(1), RTE_CACHE_LINE_SIZE);
	snprintf(dir, sizeof(dir), "/tmp/egw_bench_esp.XXXXXX");
	if (pool == NULL || qs == NULL || rte_rcu_qsbr_init(qs, 1) != 0 || mkdtemp(dir) == NULL) {
		fprintf(stderr, "bench_esp: set-up: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	snprintf(path, sizeof(path), "%s/state", dir);
	ret = egw_esp_init(qs);
	if (ret == 0)
		ret = egw_esp_state_file(path, true, err, sizeof(err));
	if (ret == 0)
		ret = esp_peers_init(&peers);
	ctx = ret == 0 ? egw_esp_ctx_create(0, pool) : NULL;
	if (ctx == NULL || raw_init(&arch) != 0) {
		fprintf(stderr, "bench_esp: ESP set-up: %d %s\n", ret, err);
		return 1;
	}
	if (sa_pair(SPI_TUNNEL, EGW_ESP_MODE_TUNNEL, MTU_TUNNEL) != 0 ||
	    sa_pair(SPI_TRANSPORT, EGW_ESP_MODE_TRANSPORT, MTU_TRANSPORT) != 0)
		return 1;
	rte_rcu_qsbr_thread_register(qs, 0);
	rte_rcu_qsbr_thread_online(qs, 0);

	for (i = 0; i < RTE_DIM(cases); i++) {
		struct bcase *c = &cases[i];
		char full[64];

		snprintf(full, sizeof(full), "%s %s", mode_name(c->mode), c->name);
		run[i] = (only_case == NULL || strstr(full, only_case) != NULL) &&
			 (only_mode == NULL || strcmp(only_mode, mode_name(c->mode)) == 0);
		if (!run[i])
			continue;
		c->n_in = c->kind == K_GSO || c->kind == K_TSO ? o.gso_pkts : BURST;
		c->t_lib = calloc(o.rounds, sizeof(double));
		c->t_raw = calloc(o.rounds, sizeof(double));
		c->t_direct = calloc(o.rounds, sizeof(double));
		c->t_ratio = calloc(o.rounds, sizeof(double));
		c->t_dir_off = calloc(o.rounds, sizeof(double));
		template_for(c);
		if (c->t_lib == NULL || c->t_raw == NULL || c->t_direct == NULL ||
		    c->t_ratio == NULL || c->t_dir_off == NULL || check_case(c) != 0) {
			fprintf(stderr, "bench_esp: %s %s: check failed\n", mode_name(c->mode),
				c->name);
			return 1;
		}
		/* warm-up */
		round_lib(c, 2, o.in_set);
		if (o.baseline)
			round_raw(c, 2, false, 0);
		quiescent();
	}

	ns_per_cycle = 1e9 / (double)rte_get_tsc_hz();
	for (r = 0; r < o.rounds; r++) {
		for (i = 0; i < RTE_DIM(cases); i++) {
			struct bcase *c = &cases[i];
			unsigned int nb =
				c->kind == K_GSO || c->kind == K_TSO ? o.gso_bursts : o.bursts;
			uint64_t lib, raw = 0, dir_cyc = 0;

			if (!run[i])
				continue;
			template_for(c);
			/* the library between the two raw APIs, their order swapped
			 * every round: none always runs first */
			if (o.baseline) {
				if (r % 2 == 0)
					raw = round_raw(c, nb, false, 0);
				else
					dir_cyc = round_raw(c, nb, true, 0);
			}
			lib = round_lib(c, nb, o.in_set);
			if (o.baseline) {
				if (r % 2 == 0)
					dir_cyc = round_raw(c, nb, true, 0);
				else
					raw = round_raw(c, nb, false, 0);
				/* for reference: the direct API where the library's
				 * data lies in its cache lines */
				c->t_dir_off[r] = (double)round_raw(c, nb, true, c->lib_off) *
						  ns_per_cycle / nb;
			}
			c->t_lib[r] = (double)lib * ns_per_cycle / nb;
			c->t_raw[r] = (double)raw * ns_per_cycle / nb;
			c->t_direct[r] = (double)dir_cyc * ns_per_cycle / nb;
			c->t_ratio[r] = lib == 0 ? 0 : (double)RTE_MIN(raw, dir_cyc) / (double)lib;
		}
		service();
	}

	printf("bench_esp: AES-128-GCM, IPsec-MB %s (%s code path; library context: %s), bursts "
	       "of %d, %u rounds x %u bursts (gso %u), inbound sets of %u bursts, TSC %.2f GHz, "
	       "lcore %u\n",
	       imb_get_version_str(), arch_name(arch), egw_esp_ctx_arch(ctx), BURST, o.rounds,
	       o.bursts, o.gso_bursts, o.in_set, rte_get_tsc_hz() / 1e9, rte_lcore_id());
	printf("timed: library calls only (output mbufs freed outside); ns/pkt per input "
	       "packet; library/raw = raw time (the faster of the burst and direct APIs) / "
	       "library time at the same encrypted lengths\n");
	for (i = 0; i < RTE_DIM(cases); i++)
		if (run[i])
			report(&cases[i], &o);
	if (o.baseline) {
		printf("targets (library throughput / raw AES-128-GCM at the same lengths):\n");
		for (i = 0; i < RTE_DIM(cases); i++)
			if (run[i] && cases[i].target > 0)
				printf("  %-9s %-13s >= %.2f: %.2f %s\n", mode_name(cases[i].mode),
				       cases[i].name, cases[i].target, cases[i].ratio,
				       cases[i].ratio >= cases[i].target ? "PASS" : "MISS");
	}
	if (bad != 0)
		printf("bench_esp: %" PRIu64 " calls did not do what the bench expects\n", bad);

	rte_rcu_qsbr_thread_offline(qs, 0);
	rte_rcu_qsbr_thread_unregister(qs, 0);
	egw_esp_ctx_free(ctx);
	egw_esp_fini();
	esp_peers_fini(&peers);
	if (unlink(path) != 0 || rmdir(dir) != 0)
		fprintf(stderr, "bench_esp: could not remove %s\n", dir);
	for (i = 0; i < RTE_DIM(cases); i++) {
		free(cases[i].t_lib);
		free(cases[i].t_raw);
		free(cases[i].t_direct);
		free(cases[i].t_ratio);
	}
	for (i = 0; i < BURST; i++)
		rte_free(raw_buf[i]);
	free_mb_mgr(raw_mgr);
	rte_mempool_free(pool);
	rte_eal_cleanup();
	return 0;
}
