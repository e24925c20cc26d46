/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A traffic generator for bench/ipsec_secgw.sh: sends the frames of a
 * template file in a loop on port 0 at full speed and counts (and keeps the
 * first few of) the frames that come back on port 1.
 *
 * ESP templates (the inbound cells) need a fresh sequence number in every
 * packet, or the gateway's anti-replay window drops the second loop. A
 * template frame carries AES-GCM ESP built for sequence number 0; for
 * sequence number s only the ESP header's seq field and the ICV change: with
 * the IV in the packet fixed, the GCM tag is linear in the AAD (SPI || seq),
 * tag(s) = tag(0) ^ T0[s & 0xff] ^ T1[s >> 8 & 0xff] ^ T2[..] ^ T3[s >> 24]
 * with tables of GHASH contributions the template file provides
 * (bench/ipsec_secgw_bench.py computes them, and checks them against a real
 * AES-GCM encryption). So every packet is valid ESP with an increasing
 * sequence number for the price of four table loads, and the generator stays
 * much cheaper per packet than the gateway it feeds. (The repeated IV is fine
 * for a benchmark with a throw-away key, never for real traffic.)
 *
 *   esp_gen <EAL options> -- <template> <capture.pcap> <keep> <stats.json>
 *
 * Template file (little endian): "EGWT", u32 frames, u32 has_tables; per
 * frame u16 len, u16 seq_off, u16 icv_off, len bytes; then, if has_tables,
 * 4 x 256 x 16 bytes. seq_off 0: send as is. SIGUSR1 stops sending, drains
 * port 1 for 100 ms, writes the capture (the first <keep> frames received on
 * port 1) and the counts and prints "results written"; SIGINT/SIGTERM then
 * (or at any time) exits.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_byteorder.h>

#define BURST 32
#define NB_DESC 1024
#define MAX_FRAMES 4096

struct tmpl {
	uint16_t len, seq_off, icv_off;
	uint8_t *data;
};

static struct tmpl frames[MAX_FRAMES];
static uint32_t n_frames;
static int has_tables;
static uint8_t tables[4][256][16] __rte_cache_aligned;

static volatile int sending = 1;
static volatile int running = 1;

static uint64_t tx_frames, rx_frames, rx_bytes, tx_retries;
static uint8_t *keep_buf;
static uint32_t *keep_len;
static uint32_t keep_max, keep_n;
#define KEEP_SNAP 2048

static void
on_signal(int sig)
{
	if (sig == SIGUSR1)
		sending = 0;
	else
		running = 0;
}

static void
read_template(const char *path)
{
	FILE *f = fopen(path, "rb");
	char magic[4];
	uint32_t hdr[2];

	if (f == NULL)
		rte_exit(EXIT_FAILURE, "%s: %s\n", path, strerror(errno));
	if (fread(magic, 4, 1, f) != 1 || memcmp(magic, "EGWT", 4) != 0 ||
	    fread(hdr, sizeof(hdr), 1, f) != 1)
		rte_exit(EXIT_FAILURE, "%s: not a template file\n", path);
	n_frames = hdr[0];
	has_tables = hdr[1] != 0;
	if (n_frames == 0 || n_frames > MAX_FRAMES)
		rte_exit(EXIT_FAILURE, "%s: %u frames (1..%d)\n", path, n_frames, MAX_FRAMES);
	for (uint32_t i = 0; i < n_frames; i++) {
		uint16_t h[3];

		if (fread(h, sizeof(h), 1, f) != 1)
			rte_exit(EXIT_FAILURE, "%s: truncated\n", path);
		frames[i].len = h[0];
		frames[i].seq_off = h[1];
		frames[i].icv_off = h[2];
		if (h[0] < 60 || h[0] > 9000 ||
		    (h[1] != 0 && (h[1] + 4u > h[0] || h[2] + 16u > h[0])))
			rte_exit(EXIT_FAILURE, "%s: frame %u: bad lengths\n", path, i);
		frames[i].data = malloc(h[0]);
		if (frames[i].data == NULL || fread(frames[i].data, h[0], 1, f) != 1)
			rte_exit(EXIT_FAILURE, "%s: truncated\n", path);
		if (h[1] != 0 && !has_tables)
			rte_exit(EXIT_FAILURE, "%s: ESP frame without tables\n", path);
	}
	if (has_tables && fread(tables, sizeof(tables), 1, f) != 1)
		rte_exit(EXIT_FAILURE, "%s: truncated tables\n", path);
	fclose(f);
}

static inline void
patch_esp(uint8_t *p, const struct tmpl *t, uint32_t seq)
{
	uint64_t a, b, x[2];
	const uint8_t *t0 = tables[0][seq >> 24], *t1 = tables[1][(seq >> 16) & 0xff],
		      *t2 = tables[2][(seq >> 8) & 0xff], *t3 = tables[3][seq & 0xff];
	uint32_t be = rte_cpu_to_be_32(seq);

	memcpy(p + t->seq_off, &be, 4);
	memcpy(x, t->data + t->icv_off, 16);
	memcpy(&a, t0, 8);
	memcpy(&b, t0 + 8, 8);
	x[0] ^= a;
	x[1] ^= b;
	memcpy(&a, t1, 8);
	memcpy(&b, t1 + 8, 8);
	x[0] ^= a;
	x[1] ^= b;
	memcpy(&a, t2, 8);
	memcpy(&b, t2 + 8, 8);
	x[0] ^= a;
	x[1] ^= b;
	memcpy(&a, t3, 8);
	memcpy(&b, t3 + 8, 8);
	x[0] ^= a;
	x[1] ^= b;
	memcpy(p + t->icv_off, x, 16);
}

static struct rte_mempool *pool;

static int
worker(void *arg)
{
	struct rte_mbuf *tx[BURST], *rx[BURST];
	uint16_t pending = 0, sent_off = 0;
	uint32_t next = 0, seq = 0;

	(void)arg;
	uint64_t stop_at = 0;

	while (running) {
		if (!sending) {
			/* drain port 1 for 100 ms more, then stop */
			if (stop_at == 0)
				stop_at = rte_get_timer_cycles() + rte_get_timer_hz() / 10;
			else if (rte_get_timer_cycles() > stop_at)
				break;
		}
		if (sending) {
			if (pending == 0) {
				if (rte_pktmbuf_alloc_bulk(pool, tx, BURST) == 0) {
					for (int i = 0; i < BURST; i++) {
						const struct tmpl *t = &frames[next];
						uint8_t *p = rte_pktmbuf_mtod(tx[i], uint8_t *);

						rte_memcpy(p, t->data, t->len);
						tx[i]->data_len = tx[i]->pkt_len = t->len;
						if (t->seq_off)
							patch_esp(p, t, ++seq);
						if (++next == n_frames)
							next = 0;
					}
					pending = BURST;
					sent_off = 0;
				}
			}
			if (pending) {
				uint16_t n = rte_eth_tx_burst(0, 0, tx + sent_off, pending);

				tx_frames += n;
				pending -= n;
				sent_off += n;
				if (pending)
					tx_retries++;
			}
		}
		uint16_t n = rte_eth_rx_burst(1, 0, rx, BURST);

		for (uint16_t i = 0; i < n; i++) {
			uint32_t len = rte_pktmbuf_pkt_len(rx[i]);

			rx_bytes += len;
			if (keep_n < keep_max) {
				uint32_t cp = len < KEEP_SNAP ? len : KEEP_SNAP;

				uint8_t *dst = keep_buf + (size_t)keep_n * KEEP_SNAP;
				const void *src = rte_pktmbuf_read(rx[i], 0, cp, dst);

				/* a pointer into the mbuf when contiguous */
				if (src != NULL && src != dst)
					memcpy(dst, src, cp);
				keep_len[keep_n++] = len;
			}
		}
		rx_frames += n;
		rte_pktmbuf_free_bulk(rx, n);
	}
	if (pending)
		rte_pktmbuf_free_bulk(tx + sent_off, pending);
	return 0;
}

static void
write_capture(const char *path)
{
	FILE *f = fopen(path, "wb");
	uint32_t gh[6] = {0xa1b2c3d4, 0x00040002, 0, 0, 65535, 1};

	if (f == NULL) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return;
	}
	fwrite(gh, sizeof(gh), 1, f);
	for (uint32_t i = 0; i < keep_n; i++) {
		uint32_t cp = keep_len[i] < KEEP_SNAP ? keep_len[i] : KEEP_SNAP;
		uint32_t rh[4] = {0, i, cp, keep_len[i]};

		fwrite(rh, sizeof(rh), 1, f);
		fwrite(keep_buf + (size_t)i * KEEP_SNAP, cp, 1, f);
	}
	fclose(f);
}

static void
port_setup(uint16_t port)
{
	struct rte_eth_conf conf;
	int ret;

	memset(&conf, 0, sizeof(conf));
	ret = rte_eth_dev_configure(port, 1, 1, &conf);
	if (ret < 0)
		rte_exit(EXIT_FAILURE, "port %u: configure: %s\n", port, strerror(-ret));
	ret = rte_eth_rx_queue_setup(port, 0, NB_DESC, rte_eth_dev_socket_id(port), NULL, pool);
	if (ret < 0)
		rte_exit(EXIT_FAILURE, "port %u: rx queue: %s\n", port, strerror(-ret));
	ret = rte_eth_tx_queue_setup(port, 0, NB_DESC, rte_eth_dev_socket_id(port), NULL);
	if (ret < 0)
		rte_exit(EXIT_FAILURE, "port %u: tx queue: %s\n", port, strerror(-ret));
	ret = rte_eth_dev_start(port);
	if (ret < 0)
		rte_exit(EXIT_FAILURE, "port %u: start: %s\n", port, strerror(-ret));
}

int
main(int argc, char **argv)
{
	struct rte_eth_stats st0, st1;
	unsigned int lcore;
	FILE *f;
	int ret = rte_eal_init(argc, argv);

	if (ret < 0)
		rte_exit(EXIT_FAILURE, "EAL init failed\n");
	argc -= ret;
	argv += ret;
	if (argc != 5)
		rte_exit(EXIT_FAILURE,
			 "usage: esp_gen <EAL> -- <template> <capture.pcap> <keep> <stats.json>\n");
	read_template(argv[1]);
	keep_max = (uint32_t)strtoul(argv[3], NULL, 0);
	keep_buf = malloc((size_t)keep_max * KEEP_SNAP + 1);
	keep_len = calloc(keep_max + 1, sizeof(*keep_len));
	if (keep_buf == NULL || keep_len == NULL)
		rte_exit(EXIT_FAILURE, "out of memory\n");
	if (rte_eth_dev_count_avail() != 2)
		rte_exit(EXIT_FAILURE, "needs exactly two ports (port 0 TX, port 1 RX)\n");
	/* data room for the largest frame */
	pool = rte_pktmbuf_pool_create("gen", 16383, 256, 0, RTE_PKTMBUF_HEADROOM + 2048,
				       rte_socket_id());
	if (pool == NULL)
		rte_exit(EXIT_FAILURE, "mbuf pool: %s\n", rte_strerror(rte_errno));
	port_setup(0);
	port_setup(1);
	signal(SIGUSR1, on_signal);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	lcore = rte_get_next_lcore(-1, 1, 0);
	if (lcore >= RTE_MAX_LCORE)
		rte_exit(EXIT_FAILURE, "needs a worker lcore (-l main,worker)\n");
	rte_eal_remote_launch(worker, NULL, lcore);
	printf("esp_gen: %u template frames (%s), sending on port 0, worker lcore %u\n", n_frames,
	       has_tables ? "ESP, fresh sequence numbers" : "as is", lcore);
	printf("Forwarding started\n");
	fflush(stdout);
	while (running && sending)
		usleep(20000);
	rte_eal_mp_wait_lcore();
	rte_eth_stats_get(0, &st0);
	rte_eth_stats_get(1, &st1);
	write_capture(argv[2]);
	f = fopen(argv[4], "w");
	if (f != NULL) {
		fprintf(f,
			"{\"tx_frames\": %" PRIu64 ", \"rx_frames\": %" PRIu64
			", \"rx_bytes\": %" PRIu64 ", \"tx_retries\": %" PRIu64
			", \"kept\": %u, \"port0\": {\"opackets\": %" PRIu64
			", \"oerrors\": %" PRIu64 "}, \"port1\": {\"ipackets\": %" PRIu64
			", \"imissed\": %" PRIu64 ", \"ierrors\": %" PRIu64 "}}\n",
			tx_frames, rx_frames, rx_bytes, tx_retries, keep_n, st0.opackets,
			st0.oerrors, st1.ipackets, st1.imissed, st1.ierrors);
		fclose(f);
	}
	printf("esp_gen: sent %" PRIu64 ", received %" PRIu64 "; results written\n", tx_frames,
	       rx_frames);
	fflush(stdout);
	/*
	 * Results are out before the DUT goes away: DPDK 22.11's net_memif can
	 * crash when its peer disconnects. Wait for SIGTERM, then leave
	 * without closing the ports.
	 */
	while (running)
		usleep(20000);
	_exit(0);
}
