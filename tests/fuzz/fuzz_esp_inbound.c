/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for inbound ESP (lib/esp): egw_esp_is_esp() and
 * egw_esp_inbound_burst() against eleven inbound SAs set up once: tunnel over
 * IPv4 and IPv6, transport, NAT-T (ports 4500 and 4501), ESN with windows of
 * 64 and 4096 whose initial top lies below, across and above 2^32 boundaries,
 * AES-128/256-GCM and ChaCha20-Poly1305, one at the end of the 64-bit ESN
 * space, one with a hard lifetime of 3 packets; each SA has inbound PROTECT
 * policies for a destination prefix of its own (10.<i+1>.0.0/16,
 * 2001:db8:<i+1>::/48), and a DISCARD and a BYPASS rule follow. Every input
 * starts from the same SA state (replay windows back at the configured top,
 * lifetimes unused), so an input always behaves the same.
 *
 * Byte 0, bit 0 selects the mode.
 *
 * Raw (bit 0 clear): the frames are fuzzer bytes.
 *   byte 0   bits 1-2: l2_len (14, 18, 22, 14); bits 3-4: how the third
 *            feed holds the frame (mbuf shared with refcnt 2, indirect clone,
 *            external buffer, external buffer shared with a second mbuf);
 *            bit 5: triple the copies (bursts up to 256, two chunks inside);
 *            bit 6: first chain segment starts 200 bytes in; bit 7: oversized
 *            chain
 *   byte 1   bits 0-2: chain segments - 1; then that many segment lengths
 *   byte     copies of frame 0 in the burst (low 6 bits)
 *   2 bytes  length of frame 0, then frame 0
 *   then     more frames, each a 2-byte length and the bytes
 * Frame 0 goes through egw_esp_is_esp() and egw_esp_inbound_burst() alone in
 * one mbuf, as a chain cut at the given lengths, and in the third form; all
 * three must give the same verdict and the same bytes. With bit 7, frame 0
 * padded past the pool's data room, as a chain, must be dropped as
 * esp_nomem. Then all frames go in one burst: frame 0, each further frame
 * followed by a copy of frame 0, the remaining copies. Frame 0 must fare as
 * alone, and no two accepted frames may carry the same SPI and sequence
 * number (a replay within the burst). Valid ESP frames in the seed corpus let
 * mutations of everything the ICV does not cover (Ethernet, outer IP, UDP,
 * lengths) reach the decap code.
 *
 * Sealed (bit 0 set): the harness builds ESP packets and seals them with
 * the SA's own key through the library's esp_job_aead()/esp_jobs_get()/
 * esp_jobs_run(), so the ICV verifies and the trailer, decap and policy code
 * run on hostile plaintexts.
 *   byte 0   bit 1: drain the frame pool to bits 2-3 spare mbufs while the
 *            library runs; bit 4: two bursts, egw_esp_service() between
 *   byte 1   packets - 1 (mod 24); then, with bit 4, where the second burst
 *            starts (mod packets; 0 = one burst)
 *   per packet:
 *     byte   SA (mod 11)
 *     byte   f1 bits 0-1: sequence number: top + 1 + u8, top - u16,
 *            top + u32, u64; bits 2-3: l2_len; bit 4: plaintext given raw;
 *            bits 5-6: mbuf form (one mbuf, chain, shared, other); bit 7:
 *            IPv4 options / IPv6 extension headers
 *     1-8    the sequence number bytes
 *     byte   f2 bits 0-4: outer tweak (see enum tweak; >= TW_MAX = none);
 *            bits 5-6: Ethernet padding after the IP packet; bit 7: DF
 *     byte   tweak parameter (also: transport family and policy prefix)
 *     byte   options/extension headers (if f1 bit 7)
 *     byte   form 1: chain segment length - 32; form 3: clone, external
 *            buffer, shared external buffer, external buffer
 *     plaintext, raw: 2-byte length, bytes (the trailer is in them)
 *     plaintext, built: byte i1 (bit 0 inner IPv6, bits 1-2 destination: own
 *            SA's prefix, another SA's, the DISCARD/BYPASS prefix; bits 3-5
 *            inner tweak: length field too long or short, version, IHL;
 *            bits 6-7 next header: right, byte x, 59), 2-byte payload
 *            length, byte TFC padding, byte padding (bits 0-5 extra 4-byte
 *            blocks, bits 6-7: right, a byte wrong, pad length off, pad
 *            length x), byte x, the payload
 * A reference model written here from RFC 4303 and the API documentation
 * predicts each packet: copy of a shared, indirect or chained mbuf (an
 * unshared external buffer is written in place; esp_nomem when the pool is
 * dry), parse (fragments: esp_fragment), SPI, SA match, lifetime, ESN
 * inference (RFC 4303 A2.2), replay check before the ICV against the window
 * as the burst found it, ICV, hard lifetime and window update in burst
 * order, padding, next header, inner packet, ECN (RFC 6040 4.2: outer CE on
 * a Not-ECT inner packet is esp_ecn), policy (an IPv6 packet whose
 * upper-layer protocol cannot be read matches no PROTECT rule). The
 * transport SAs' destinations are registered as local addresses. The accepted packets, their bytes and the per-reason drop counts
 * must match the prediction exactly; in particular a well-formed packet with
 * a fresh sequence number is accepted and a replayed one is not.
 *
 * For every burst: count <= n; outputs in input order, each an unshared
 * single-segment mbuf (direct, or on an unshared external buffer of the
 * input) with pkt_len == data_len, l2_len as given
 * and an IP length field that covers exactly pkt_len - l2_len; drops +
 * accepted == n, and the context's counters moved by as much; no mbuf or
 * external buffer leaked or freed twice (pool counts back to the start).
 * The mbufs' headroom and the room behind the packet are poisoned for ASan
 * while the library holds them, so reads past the frame are caught even
 * though the pool is one big allocation.
 *
 * FUZZ_ESP_TRACE=1 in the environment prints each burst's verdicts.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <sanitizer/asan_interface.h>

#include <rte_common.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_rcu_qsbr.h>

#include "egw_esp.h"
#include "esp_crypto.h"
#include "esp_private.h"
#include "fuzz_common.h"
#include "fuzz_eal.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FRAME_MAX 4096    /* largest frame; the pool's data room past the headroom */
#define SEG_ROOM 256      /* data room of chain segments past the headroom */
#define SEALED_MAX 24     /* packets in a sealed burst */
#define RAW_FRAMES_MAX 64 /* frames in a raw input */
#define BURST_MAX 256     /* packets in a raw burst (chunks of EGW_ESP_MAX_BURST inside) */
#define EXT_MAX 32        /* external buffers */
#define PT_MAX 2048       /* plaintext bytes of a sealed packet */
#define MIN_ESP (ESP_HDR_LEN + ESP_IV_LEN + 4 + ESP_ICV_LEN)
#define NONE EGW_ESP_DROP_MAX /* "accepted" as a reason */

/* ---- the SAs ------------------------------------------------------------ */

struct fsa {
	uint32_t spi;
	enum egw_esp_mode mode;
	enum egw_esp_aead aead;
	uint8_t outer; /* tunnel: outer family */
	bool esn;
	bool natt;
	uint16_t dport; /* NAT-T destination port */
	uint32_t window;
	uint64_t top0; /* initial window top (conf.seq_start) */
	uint64_t life; /* hard lifetime in packets (soft: one less); 0 = none */
};

static const struct fsa fsas[] = {
	{0x1000, EGW_ESP_MODE_TUNNEL, EGW_ESP_AES128_GCM, AF_INET, false, false, 0, 64, 0, 0},
	{0x1001, EGW_ESP_MODE_TUNNEL, EGW_ESP_AES256_GCM, AF_INET6, false, false, 0, 128, 0, 0},
	{0x1002, EGW_ESP_MODE_TRANSPORT, EGW_ESP_AES128_GCM, 0, false, false, 0, 128, 0, 0},
	{0x1003, EGW_ESP_MODE_TRANSPORT, EGW_ESP_CHACHA20_POLY1305, 0, false, true, 4500, 128, 0,
	 0},
	{0x1004, EGW_ESP_MODE_TUNNEL, EGW_ESP_AES256_GCM, AF_INET, false, true, 4500, 64, 1000, 0},
	/* ESN, window across 2^32 (RFC 4303 A2.2 case B) */
	{0x1005, EGW_ESP_MODE_TUNNEL, EGW_ESP_CHACHA20_POLY1305, AF_INET6, true, false, 0, 4096,
	 UINT64_C(0x100000010), 0},
	/* ESN, window just below 2^32 (case A, next subspace close) */
	{0x1006, EGW_ESP_MODE_TRANSPORT, EGW_ESP_AES128_GCM, 0, true, false, 0, 64,
	 UINT64_C(0xfffffff0), 0},
	/* ESN, top below the window size (no lower subspace) */
	{0x1007, EGW_ESP_MODE_TUNNEL, EGW_ESP_CHACHA20_POLY1305, AF_INET, true, true, 4501, 4096, 5,
	 0},
	{0x1008, EGW_ESP_MODE_TUNNEL, EGW_ESP_AES128_GCM, AF_INET6, true, true, 4500, 64,
	 UINT64_C(0x200000100), 0},
	/* stops after exactly 3 packets (checked under the SA's lock, in any
	 * burst); egw_esp_service() marks it expired for later bursts */
	{0x1009, EGW_ESP_MODE_TUNNEL, EGW_ESP_AES128_GCM, AF_INET, false, false, 0, 64, 0, 3},
	/* ESN at the end of the 64-bit space: no next subspace */
	{0x100a, EGW_ESP_MODE_TRANSPORT, EGW_ESP_AES256_GCM, 0, true, false, 0, 128,
	 UINT64_C(0xfffffffffffffeff), 0},
};
#define NSA RTE_DIM(fsas)

/* Harness model of a replay window: RFC 4303 3.4.3 on a plain list. */
struct model {
	uint64_t top;
	uint32_t size;
	unsigned int n; /* accepted numbers, this input */
	uint64_t acc[SEALED_MAX];
};

static struct rte_mempool *pool;      /* frames */
static struct rte_mempool *segpool;   /* small chain segments */
static struct rte_mempool *clonepool; /* indirect mbufs */
static struct egw_esp_ctx *ctx;
/* LeakSanitizer does not scan DPDK memory: the context's IPsec-MB manager
 * (malloc'd) would look leaked at exit without a pointer to it here */
static void *lsan_root;
static struct rte_rcu_qsbr *qs;
static struct egw_esp_sa *rt[NSA];
static struct model mdl[NSA];
static unsigned int avail0[3];
/* One mbuf of each pool stays out: rte_mempool_avail_count() clamps at the
 * pool size, which would hide a double free into an otherwise full pool. */
static struct rte_mbuf *held[3];
static char state_dir[64];
static char state_path[128];
static bool trace; /* FUZZ_ESP_TRACE=1: print each burst's verdicts */

static uint8_t *ext_buf[EXT_MAX];
static unsigned int ext_used; /* attached this burst */
static unsigned int ext_freed;

/* What a burst holds besides the packets: extra references to drop, and
 * buffers poisoned for ASan. */
static struct rte_mbuf *extra_ref[BURST_MAX];
static unsigned int n_extra;
static struct {
	void *addr; /* not the mbuf: a freed one may point elsewhere */
	uint32_t len;
} poisoned[BURST_MAX];
static unsigned int n_poisoned;

static const uint8_t tun_dst4[4] = {192, 0, 2, 1};
static const uint8_t tun_dst6[16] = {0x20, 0x01, 0x0d, 0xb8, 0xff, 0xff, 0, 0,
				     0,    0,    0,    0,    0,    0,    0, 1};

static void
tun_addrs(unsigned int s, uint8_t family, uint8_t *src, uint8_t *dst)
{
	if (family == AF_INET) {
		src[0] = 198;
		src[1] = 51;
		src[2] = 100;
		src[3] = (uint8_t)(10 + s);
		memcpy(dst, tun_dst4, 4);
	} else {
		memcpy(src, tun_dst6, 16);
		src[15] = (uint8_t)(10 + s);
		memcpy(dst, tun_dst6, 16);
	}
}

/* Policy destination t (an SA index, or NSA for the DISCARD/BYPASS prefix). */
static void
pol_dst(unsigned int t, uint8_t family, uint8_t *dst)
{
	if (family == AF_INET) {
		dst[0] = 10;
		dst[1] = (uint8_t)(t < NSA ? t + 1 : 250);
		dst[2] = 0;
		dst[3] = 5;
	} else {
		static const uint8_t p6[16] = {0x20, 0x01, 0x0d, 0xb8};

		memcpy(dst, p6, 16);
		dst[5] = (uint8_t)(t < NSA ? t + 1 : 0xfa);
		dst[15] = 5;
	}
}

/* RFC 8200 4: the extension headers the SPD looks through for the
 * upper-layer protocol (hop-by-hop, routing, fragment, destination options). */
static bool
ref_ext(uint8_t nh)
{
	return nh == 0 || nh == 43 || nh == 44 || nh == 60;
}

/* The upper-layer protocol of an IPv6 packet of len bytes behind its
 * extension headers, at most 8 of them, each within the packet; -1 when it
 * cannot be read (the SPD then matches DISCARD rules only). */
static int
ref_upper6(const uint8_t *ip, uint32_t len)
{
	uint32_t off = 40, end = len, plen = (uint32_t)ip[4] << 8 | ip[5];
	uint8_t nh = ip[6];
	unsigned int i;

	if (plen != 0 && 40 + plen < end)
		end = 40 + plen;
	for (i = 0; i < 8 && ref_ext(nh); i++) {
		if (end < off + 8)
			return -1;
		if (nh == 44) {
			/* a later fragment: no headers past this one */
			bool later = ((uint32_t)ip[off + 2] << 8 | ip[off + 3]) >> 3 != 0;

			nh = ip[off];
			off += 8;
			if (later)
				break;
			continue;
		}
		if (end - off < (ip[off + 1] + 1u) * 8)
			return -1;
		nh = ip[off];
		off += (ip[off + 1] + 1u) * 8;
	}
	/* (a later fragment ends the walk: nothing past its fragment header
	 * is a header) lib/esp's SPD keeps 255 as its "unreadable" mark: a
	 * packet of protocol 255 (IANA: reserved) fares as one whose protocol
	 * cannot be read, a later fragment's too (reported: a collision, not
	 * an RFC rule) */
	return ref_ext(nh) || nh == 255 ? -1 : nh;
}

/* Reference policy lookup of an IP packet of len bytes: the SA whose
 * PROTECT rule matches first, or -1 (DISCARD, BYPASS, no rule: the default
 * discards, as the direction has policies; or an IPv6 packet whose
 * upper-layer protocol cannot be read, which matches no PROTECT rule). */
static int
ref_policy(const uint8_t *ip, uint32_t len)
{
	if ((ip[0] >> 4) == 4) {
		const uint8_t *d = ip + 16;

		if (ip[9] == 255) /* see ref_upper6() */
			return -1;
		if (d[0] == 10 && d[1] >= 1 && d[1] <= NSA)
			return d[1] - 1;
		return -1;
	}
	{
		const uint8_t *d = ip + 24;

		if (ref_upper6(ip, len) < 0)
			return -1;
		if (d[0] == 0x20 && d[1] == 0x01 && d[2] == 0x0d && d[3] == 0xb8 && d[4] == 0 &&
		    d[5] >= 1 && d[5] <= NSA)
			return d[5] - 1;
		return -1;
	}
}

/* Remove the state directory and whatever the state file code put in it. */
static void
cleanup(void)
{
	char path[sizeof(state_dir) + 256 + 2];
	struct dirent *e;
	DIR *d;

	if (state_dir[0] == '\0')
		return;
	d = opendir(state_dir);
	while (d != NULL && (e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", state_dir, e->d_name);
		unlink(path);
	}
	if (d != NULL)
		closedir(d);
	rmdir(state_dir);
}

static void
ext_free_cb(void *addr, void *opaque)
{
	RTE_SET_USED(addr);
	RTE_SET_USED(opaque);
	ext_freed++;
}

static void
setup_sas(void)
{
	char err[256];
	unsigned int i, f, k;
	int rc;

	for (i = 0; i < NSA; i++) {
		const struct fsa *s = &fsas[i];
		struct egw_esp_sa_conf c;

		memset(&c, 0, sizeof(c));
		c.spi = s->spi;
		c.dir = EGW_ESP_DIR_IN;
		c.mode = s->mode;
		c.aead = s->aead;
		c.key_len = (uint8_t)egw_esp_aead_key_len(s->aead);
		for (k = 0; k < c.key_len; k++)
			c.key[k] = (uint8_t)(0x11 * (i + 1) + 7 * k);
		if (s->mode == EGW_ESP_MODE_TUNNEL) {
			c.tun_src.family = s->outer;
			c.tun_dst.family = s->outer;
			tun_addrs(i, s->outer, c.tun_src.a, c.tun_dst.a);
		}
		c.esn = s->esn;
		c.window = s->window;
		c.natt = s->natt;
		c.natt_dport = s->dport;
		c.seq_start = s->top0;
		c.life_packets.hard = s->life;
		c.life_packets.soft = s->life != 0 ? s->life - 1 : 0;
		rc = egw_esp_sa_add(&c, err, sizeof(err));
		FUZZ_ASSERT(rc == 0, "SA 0x%x: %s", s->spi, err);
		rt[i] = esp_sa_find(s->spi, EGW_ESP_DIR_IN);
		FUZZ_ASSERT(rt[i] != NULL && rt[i]->replay->size == s->window, "SA 0x%x", s->spi);
	}
	for (i = 0; i <= NSA; i++) {
		for (f = 0; f < 2; f++) {
			struct egw_esp_policy p;

			memset(&p, 0, sizeof(p));
			p.dir = EGW_ESP_DIR_IN;
			p.family = f ? AF_INET6 : AF_INET;
			p.src.addr.family = p.family;
			p.dst.addr.family = p.family;
			pol_dst(i, p.family, p.dst.addr.a);
			if (f) {
				memset(p.dst.addr.a + 6, 0, 10);
				p.dst.len = 48;
			} else {
				p.dst.addr.a[3] = 0;
				p.dst.len = 16;
			}
			p.proto = -1;
			if (i < NSA) {
				p.action = EGW_ESP_PROTECT;
				p.spi = fsas[i].spi;
			} else {
				p.action = f ? EGW_ESP_BYPASS : EGW_ESP_DISCARD;
			}
			rc = egw_esp_policy_add(&p, -1, err, sizeof(err));
			FUZZ_ASSERT(rc > 0, "policy %u/%u: %s", i, f, err);
		}
	}
	/* transport-mode ESP ends at the packet's destination, one of the
	 * policy prefixes' .5 addresses: edgegw's own for egw_esp_is_esp()
	 * (tunnel SAs register their outer destination themselves) */
	for (i = 0; i < NSA; i++)
		for (f = 0; f < 2; f++) {
			struct egw_esp_addr a;

			memset(&a, 0, sizeof(a));
			a.family = f ? AF_INET6 : AF_INET;
			pol_dst(i, a.family, a.a);
			rc = egw_esp_local_addr_add(&a);
			FUZZ_ASSERT(rc == 0, "local address %u/%u: %d", i, f, rc);
		}
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char err[256];
	unsigned int i;
	int rc;

	RTE_SET_USED(argc);
	if (fuzz_eal_init((*argv)[0]) < 0) {
		fprintf(stderr, "fuzz_esp_inbound: rte_eal_init: %s\n", rte_strerror(rte_errno));
		abort();
	}
	trace = getenv("FUZZ_ESP_TRACE") != NULL && strcmp(getenv("FUZZ_ESP_TRACE"), "1") == 0;
	pool = rte_pktmbuf_pool_create("fz_esp", 2047, 0, 0, RTE_PKTMBUF_HEADROOM + FRAME_MAX,
				       rte_socket_id());
	segpool = rte_pktmbuf_pool_create("fz_esp_seg", 8191, 0, 0, RTE_PKTMBUF_HEADROOM + SEG_ROOM,
					  rte_socket_id());
	clonepool = rte_pktmbuf_pool_create("fz_esp_ind", 511, 0, 0, 0, rte_socket_id());
	qs = rte_zmalloc(NULL, rte_rcu_qsbr_get_memsize(1), RTE_CACHE_LINE_SIZE);
	FUZZ_ASSERT(pool != NULL && segpool != NULL && clonepool != NULL && qs != NULL, "pools: %s",
		    rte_strerror(rte_errno));
	rte_rcu_qsbr_init(qs, 1);
	for (i = 0; i < EXT_MAX; i++) {
		ext_buf[i] = rte_malloc(NULL, RTE_PKTMBUF_HEADROOM + FRAME_MAX + 64, 64);
		FUZZ_ASSERT(ext_buf[i] != NULL, "external buffers");
	}
	snprintf(state_dir, sizeof(state_dir), "/tmp/fuzz_esp_inb.XXXXXX");
	FUZZ_ASSERT(mkdtemp(state_dir) != NULL, "mkdtemp: %s", strerror(errno));
	snprintf(state_path, sizeof(state_path), "%s/state", state_dir);
	rc = egw_esp_init(qs);
	FUZZ_ASSERT(rc == 0, "egw_esp_init: %d", rc);
	rc = egw_esp_state_file(state_path, true, err, sizeof(err));
	FUZZ_ASSERT(rc == 0, "state file: %s", err);
	ctx = egw_esp_ctx_create(0, pool);
	FUZZ_ASSERT(ctx != NULL, "egw_esp_ctx_create: %s", rte_strerror(rte_errno));
	lsan_root = ctx->mgr;
	setup_sas();
	/* only inbound SAs: the library never writes the state file again, so
	 * it goes now (a crash would skip an atexit handler) */
	cleanup();
	/* the data path is a QSBR reader like a worker; nothing is deleted
	 * from here on, so no grace period ever waits for it */
	rte_rcu_qsbr_thread_register(qs, 0);
	rte_rcu_qsbr_thread_online(qs, 0);
	held[0] = rte_pktmbuf_alloc(pool);
	held[1] = rte_pktmbuf_alloc(segpool);
	held[2] = rte_pktmbuf_alloc(clonepool);
	FUZZ_ASSERT(held[0] != NULL && held[1] != NULL && held[2] != NULL, "held mbufs");
	avail0[0] = rte_mempool_avail_count(pool);
	avail0[1] = rte_mempool_avail_count(segpool);
	avail0[2] = rte_mempool_avail_count(clonepool);
	return 0;
}

/* ---- replay model ---------------------------------------------------- */

/* The SAs as just added: empty windows, unused lifetimes. Written directly
 * (this thread is the only one): deleting and adding them again would cost
 * a grace period and a policy rebuild per input. */
static void
reset_windows(void)
{
	unsigned int i;

	for (i = 0; i < NSA; i++) {
		rt[i]->packets_used = 0;
		rt[i]->bytes_used = 0;
		rt[i]->soft_expired = false;
		__atomic_store_n(&rt[i]->hard_expired, 0, __ATOMIC_RELEASE);
		esp_replay_init(rt[i]->replay, fsas[i].window, fsas[i].top0);
		mdl[i].top = fsas[i].top0;
		mdl[i].size = fsas[i].window;
		mdl[i].n = 0;
	}
}

/* RFC 4303 A2.2: the number in [top - W + 1, top - W + 1 + 2^32) with these
 * low 32 bits; while the window still reaches below 0, the low bits alone. */
static uint64_t
ref_infer(uint64_t top, uint32_t w, uint32_t lo, bool esn)
{
	uint64_t bottom;

	if (!esn || top < (uint64_t)w - 1)
		return lo;
	bottom = top - w + 1;
	return bottom + (uint32_t)(lo - (uint32_t)bottom);
}

/* NONE if seq passes a window with this top and the first nacc accepted
 * numbers, else the reason. */
static unsigned int
ref_replay(const struct model *md, uint64_t top, unsigned int nacc, uint64_t seq)
{
	unsigned int i;

	if (seq == 0)
		return EGW_ESP_DROP_OUTSIDE_WINDOW;
	if (seq > top)
		return NONE;
	if (top >= md->size && seq <= top - md->size)
		return EGW_ESP_DROP_OUTSIDE_WINDOW;
	for (i = 0; i < nacc; i++)
		if (md->acc[i] == seq)
			return EGW_ESP_DROP_REPLAY;
	return NONE;
}

/* ---- mbufs ------------------------------------------------------------ */

/* Poison the buffer of m outside [data, data + pkt_len): only the library
 * runs until unpoison_all(). */
static void
poison(struct rte_mbuf *m)
{
	uint8_t *b = m->buf_addr;
	uint32_t end = (uint32_t)m->data_off + m->pkt_len;

	FUZZ_ASSERT(n_poisoned < RTE_DIM(poisoned), "poison list full");
	poisoned[n_poisoned].addr = b;
	poisoned[n_poisoned++].len = m->buf_len;
	ASAN_POISON_MEMORY_REGION(b, m->data_off);
	if (end < m->buf_len)
		ASAN_POISON_MEMORY_REGION(b + end, m->buf_len - end);
}

static void
unpoison_all(void)
{
	unsigned int i;

	for (i = 0; i < n_poisoned; i++)
		ASAN_UNPOISON_MEMORY_REGION(poisoned[i].addr, poisoned[i].len);
	n_poisoned = 0;
}

static struct rte_mbuf *
mk_single(const uint8_t *f, uint32_t len, uint8_t l2)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	char *d;

	FUZZ_ASSERT(m != NULL, "mbuf pool exhausted");
	d = rte_pktmbuf_append(m, (uint16_t)len);
	FUZZ_ASSERT(d != NULL, "frame of %u bytes does not fit", len);
	memcpy(d, f, len);
	m->l2_len = l2;
	return m;
}

/* Append len bytes to the chain at *head as segments of at most SEG_ROOM. */
static void
chain_add(struct rte_mbuf **head, const uint8_t *f, uint32_t len, uint16_t headoff)
{
	do {
		struct rte_mbuf *m = rte_pktmbuf_alloc(segpool);
		uint32_t piece;
		char *d;

		FUZZ_ASSERT(m != NULL, "segment pool exhausted");
		if (*head == NULL && headoff != 0) {
			/* less tailroom in the first segment */
			rte_pktmbuf_append(m, headoff);
			rte_pktmbuf_adj(m, headoff);
		}
		piece = RTE_MIN(len, (uint32_t)rte_pktmbuf_tailroom(m));
		d = rte_pktmbuf_append(m, (uint16_t)piece);
		FUZZ_ASSERT(d != NULL, "segment append");
		memcpy(d, f, piece);
		f += piece;
		len -= piece;
		if (*head == NULL)
			*head = m;
		else
			FUZZ_ASSERT(rte_pktmbuf_chain(*head, m) == 0, "rte_pktmbuf_chain");
	} while (len > 0);
}

/* The frame as a chain: segments of cut[0..ncut) bytes, then the rest. */
static struct rte_mbuf *
mk_chain(const uint8_t *f, uint32_t len, uint8_t l2, const uint32_t *cut, unsigned int ncut,
	 uint16_t headoff)
{
	struct rte_mbuf *head = NULL;
	uint32_t off = 0, n;
	unsigned int i;

	for (i = 0; i < ncut; i++) {
		n = RTE_MIN(cut[i], len - off);
		chain_add(&head, f + off, n, headoff);
		off += n;
	}
	chain_add(&head, f + off, len - off, headoff);
	head->l2_len = l2;
	return head;
}

enum form {
	FORM_SINGLE,
	FORM_CHAIN,
	FORM_SHARED,     /* direct, refcnt 2 */
	FORM_CLONE,      /* indirect */
	FORM_EXT,        /* external buffer nobody else references */
	FORM_EXT_SHARED, /* external buffer another mbuf references too */
};

/* The frame in an mbuf of the given form (all but FORM_CHAIN). */
static struct rte_mbuf *
mk_form(const uint8_t *f, uint32_t len, uint8_t l2, enum form form)
{
	struct rte_mbuf *m, *c;

	switch (form) {
	case FORM_SHARED:
		/* another holder: the library must copy before writing */
		m = mk_single(f, len, l2);
		rte_mbuf_refcnt_update(m, 1);
		extra_ref[n_extra++] = m;
		poison(m);
		return m;
	case FORM_CLONE:
		m = mk_single(f, len, l2);
		c = rte_pktmbuf_clone(m, clonepool);
		FUZZ_ASSERT(c != NULL, "clone pool exhausted");
		c->l2_len = l2;
		extra_ref[n_extra++] = m;
		poison(m);
		return c;
	case FORM_EXT: {
		struct rte_mbuf_ext_shared_info *sh;
		uint16_t blen = RTE_PKTMBUF_HEADROOM + FRAME_MAX + 64;
		char *d;

		FUZZ_ASSERT(ext_used < EXT_MAX, "external buffers used up");
		m = rte_pktmbuf_alloc(pool);
		FUZZ_ASSERT(m != NULL, "mbuf pool exhausted");
		sh = rte_pktmbuf_ext_shinfo_init_helper(ext_buf[ext_used], &blen, ext_free_cb,
							NULL);
		FUZZ_ASSERT(sh != NULL, "shinfo");
		rte_pktmbuf_attach_extbuf(m, ext_buf[ext_used],
					  rte_malloc_virt2iova(ext_buf[ext_used]), blen, sh);
		ext_used++;
		d = rte_pktmbuf_append(m, (uint16_t)len);
		FUZZ_ASSERT(d != NULL, "external buffer append");
		memcpy(d, f, len);
		m->l2_len = l2;
		poison(m);
		return m;
	}
	case FORM_EXT_SHARED:
		m = mk_form(f, len, l2, FORM_EXT);
		/* a second mbuf on the buffer: ext refcnt 2 */
		c = rte_pktmbuf_clone(m, clonepool);
		FUZZ_ASSERT(c != NULL, "clone pool exhausted");
		extra_ref[n_extra++] = c;
		return m;
	default:
		m = mk_single(f, len, l2);
		poison(m);
		return m;
	}
}

/* ---- running a burst ---------------------------------------------------- */

struct burst {
	struct rte_mbuf *pkts[BURST_MAX];
	uint8_t l2[BURST_MAX];
	uint16_t n, k;
	struct egw_esp_res res;
};

static struct burst bu;

static uint16_t
get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void
put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void
put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v & 0xffff);
}

/* One output frame: a valid, writable, single-segment packet whose IP
 * length field covers exactly what follows the L2 header. */
static void
check_frame(const struct rte_mbuf *m, uint8_t l2)
{
	const char *why = NULL;
	const uint8_t *ip;
	uint32_t il;

	FUZZ_ASSERT(rte_mbuf_check(m, 1, &why) == 0, "output mbuf invalid: %s", why);
	FUZZ_ASSERT(m->nb_segs == 1 && m->next == NULL && m->pkt_len == m->data_len,
		    "output not one segment (%u segs, pkt_len %u, data_len %u)", m->nb_segs,
		    m->pkt_len, m->data_len);
	/* written in place: a direct mbuf, or an external buffer of the
	 * harness's, that nobody else references */
	FUZZ_ASSERT(rte_mbuf_refcnt_read(m) == 1 && !RTE_MBUF_CLONED(m),
		    "output is shared or indirect (ol_flags 0x%" PRIx64 ", refcnt %u)", m->ol_flags,
		    rte_mbuf_refcnt_read(m));
	if (RTE_MBUF_HAS_EXTBUF(m)) {
		unsigned int e;

		for (e = 0; e < ext_used && m->buf_addr != (void *)ext_buf[e]; e++)
			;
		FUZZ_ASSERT(e < ext_used && m->shinfo != NULL &&
				    rte_mbuf_ext_refcnt_read(m->shinfo) == 1,
			    "output on an external buffer that is not an unshared one of the "
			    "inputs");
	}
	FUZZ_ASSERT(m->l2_len == l2, "l2_len %u changed to %u", l2, m->l2_len);
	FUZZ_ASSERT(m->pkt_len >= (uint32_t)l2 + 20, "output of %u bytes has no IP header",
		    m->pkt_len);
	ip = rte_pktmbuf_mtod(m, const uint8_t *) + l2;
	il = m->pkt_len - l2;
	if ((ip[0] >> 4) == 4) {
		FUZZ_ASSERT(get16(ip + 2) == il, "IPv4 total length %u, packet %u", get16(ip + 2),
			    il);
		FUZZ_ASSERT((ip[0] & 0xf) >= 5 && (ip[0] & 0xfu) * 4 <= il,
			    "IPv4 IHL %u in %u bytes", ip[0] & 0xf, il);
	} else {
		FUZZ_ASSERT((ip[0] >> 4) == 6, "output IP version %u", ip[0] >> 4);
		FUZZ_ASSERT(il >= 40 && get16(ip + 4) + 40u == il,
			    "IPv6 payload length %u, packet %u", get16(ip + 4), il);
	}
}

/* Run bu.pkts[0..n) (port = index) and check what every burst must hold. */
static void
run_burst(void)
{
	struct egw_esp_ctx_stats s0, s1;
	uint32_t drops = 0;
	unsigned int r;
	uint16_t i;

	for (i = 0; i < bu.n; i++)
		bu.pkts[i]->port = i;
	memset(&bu.res, 0, sizeof(bu.res));
	egw_esp_ctx_stats(ctx, &s0);
	bu.k = egw_esp_inbound_burst(ctx, bu.pkts, bu.n, &bu.res);
	rte_rcu_qsbr_quiescent(qs, 0);
	unpoison_all();
	egw_esp_ctx_stats(ctx, &s1);
	FUZZ_ASSERT(bu.k <= bu.n, "returned %u of %u", bu.k, bu.n);
	for (r = 0; r < EGW_ESP_DROP_MAX; r++) {
		drops += bu.res.drop[r];
		FUZZ_ASSERT(s1.drop[r] - s0.drop[r] == bu.res.drop[r],
			    "context counter %s moved by %" PRIu64 ", result says %u",
			    egw_esp_drop_name(r), s1.drop[r] - s0.drop[r], bu.res.drop[r]);
	}
	FUZZ_ASSERT(drops + bu.k == bu.n, "%u dropped + %u good != %u in", drops, bu.k, bu.n);
	FUZZ_ASSERT(s1.in_packets - s0.in_packets == bu.k,
		    "in_packets moved by %" PRIu64 ", %u good", s1.in_packets - s0.in_packets,
		    bu.k);
	FUZZ_ASSERT(bu.res.n_out == 0 && bu.res.n_icmp == 0 && bu.res.created == 0 &&
			    bu.res.bypass == 0,
		    "inbound touched outbound result fields");
	if (trace) {
		fprintf(stderr, "burst of %u: %u good", bu.n, bu.k);
		for (r = 0; r < EGW_ESP_DROP_MAX; r++)
			if (bu.res.drop[r] != 0)
				fprintf(stderr, ", %u %s", bu.res.drop[r], egw_esp_drop_name(r));
		fprintf(stderr, "\n");
	}
	for (i = 0; i < bu.k; i++) {
		uint16_t tag = bu.pkts[i]->port;

		FUZZ_ASSERT(tag < bu.n && (i == 0 || tag > bu.pkts[i - 1]->port),
			    "outputs out of input order (%u after %u)", tag,
			    i ? bu.pkts[i - 1]->port : 0);
		check_frame(bu.pkts[i], bu.l2[tag]);
	}
}

/* Free the outputs and what the harness held; nothing may be missing or
 * freed twice. */
static void
release(void)
{
	unsigned int i;

	rte_pktmbuf_free_bulk(bu.pkts, bu.k);
	for (i = 0; i < n_extra; i++)
		rte_pktmbuf_free(extra_ref[i]);
	n_extra = 0;
	FUZZ_ASSERT(rte_mempool_avail_count(pool) == avail0[0],
		    "frame pool: %u free, %u at start (leak or double free)",
		    rte_mempool_avail_count(pool), avail0[0]);
	FUZZ_ASSERT(rte_mempool_avail_count(segpool) == avail0[1],
		    "segment pool: %u free, %u at start", rte_mempool_avail_count(segpool),
		    avail0[1]);
	FUZZ_ASSERT(rte_mempool_avail_count(clonepool) == avail0[2],
		    "indirect pool: %u free, %u at start", rte_mempool_avail_count(clonepool),
		    avail0[2]);
	FUZZ_ASSERT(ext_freed == ext_used, "external buffers: %u attached, %u freed", ext_used,
		    ext_freed);
	ext_used = ext_freed = 0;
}

/* The one reason a single-packet burst dropped for, or NONE. */
static unsigned int
reason_of(void)
{
	unsigned int r;

	if (bu.k == 1)
		return NONE;
	for (r = 0; r < EGW_ESP_DROP_MAX; r++)
		if (bu.res.drop[r] != 0)
			return r;
	return NONE;
}

/* SPI and sequence number of an ESP frame the library accepted. */
static void
esp_id(const uint8_t *f, uint32_t len, uint8_t l2, uint32_t *spi, uint32_t *seq)
{
	const uint8_t *ip = f + l2;
	uint32_t off;
	uint8_t proto;

	FUZZ_ASSERT(len >= (uint32_t)l2 + 40, "accepted frame of %u bytes", len);
	if ((ip[0] >> 4) == 4) {
		off = (ip[0] & 0xfu) * 4;
		proto = ip[9];
	} else {
		off = 40;
		proto = ip[6];
		while (proto == 0 || proto == 43 || proto == 60) {
			FUZZ_ASSERT(l2 + off + 8 <= len, "accepted frame: extension headers");
			proto = ip[off];
			off += (ip[off + 1] + 1u) * 8;
		}
	}
	if (proto == IPPROTO_UDP)
		off += 8;
	FUZZ_ASSERT(l2 + off + 8 <= len, "accepted frame: no room for ESP");
	*spi = (uint32_t)get16(ip + off) << 16 | get16(ip + off + 2);
	*seq = (uint32_t)get16(ip + off + 4) << 16 | get16(ip + off + 6);
}

/* ---- raw mode ----------------------------------------------------------- */

struct verdict {
	unsigned int reason; /* NONE = accepted */
	uint32_t len;
	uint8_t out[FRAME_MAX];
};

static struct verdict va;

static void
same_verdict(const char *what)
{
	unsigned int r = reason_of();

	FUZZ_ASSERT(r == va.reason, "%s: %s, alone in one mbuf: %s", what,
		    r == NONE ? "accepted" : egw_esp_drop_name(r),
		    va.reason == NONE ? "accepted" : egw_esp_drop_name(va.reason));
	if (r == NONE)
		FUZZ_ASSERT(bu.pkts[0]->pkt_len == va.len &&
				    memcmp(rte_pktmbuf_mtod(bu.pkts[0], uint8_t *), va.out,
					   va.len) == 0,
			    "%s: output differs from the one-mbuf output", what);
}

/*
 * Does the frame's ethertype name its IP version? egw_esp_is_esp() takes
 * only such frames, and egw_esp_inbound_burst() drops the others
 * (esp_not_ip), so an accepted frame always agrees.
 */
static bool
et_agrees(const uint8_t *f, uint32_t len, uint8_t l2)
{
	uint16_t et;

	if (l2 < 2 || len <= l2)
		return false;
	et = get16(f + l2 - 2);
	return (et == 0x0800 && (f[l2] >> 4) == 4) || (et == 0x86dd && (f[l2] >> 4) == 6);
}

/*
 * Is the frame's outer destination one the harness registered as local (a
 * tunnel destination, or a transport SA's .5 address)? egw_esp_inbound_burst()
 * does not check the destination of transport-mode ESP (egw_esp_is_esp() is
 * the gate: ESP to another address is transit), so a mutated destination can
 * decrypt there while egw_esp_is_esp() rightly calls it transit.
 */
static bool
ref_local(const uint8_t *f, uint32_t len, uint8_t l2)
{
	const uint8_t *ip = f + l2;
	uint8_t a[16];
	unsigned int t;

	if ((ip[0] >> 4) == 4 && len >= (uint32_t)l2 + 20) {
		if (memcmp(ip + 16, tun_dst4, 4) == 0)
			return true;
		for (t = 0; t < NSA; t++) {
			pol_dst(t, AF_INET, a);
			if (memcmp(ip + 16, a, 4) == 0)
				return true;
		}
	} else if ((ip[0] >> 4) == 6 && len >= (uint32_t)l2 + 40) {
		if (memcmp(ip + 24, tun_dst6, 16) == 0)
			return true;
		for (t = 0; t < NSA; t++) {
			pol_dst(t, AF_INET6, a);
			if (memcmp(ip + 24, a, 16) == 0)
				return true;
		}
	}
	return false;
}

/* Must egw_esp_is_esp() take a frame egw_esp_inbound_burst() accepted? */
static bool
must_be_esp(const uint8_t *f, uint32_t len, uint8_t l2)
{
	return et_agrees(f, len, l2) && ref_local(f, len, l2);
}

static void
raw_mode(struct in *in, uint8_t b0)
{
	static const uint8_t l2s[4] = {14, 18, 22, 14};
	static const enum form forms[4] = {FORM_SHARED, FORM_CLONE, FORM_EXT, FORM_EXT_SHARED};
	static const char *const form_names[4] = {"shared (refcnt 2)", "as an indirect clone",
						  "in an external buffer",
						  "in a shared external buffer"};
	static uint8_t fesp[BURST_MAX];
	const uint8_t *fr[RAW_FRAMES_MAX];
	uint32_t flen[RAW_FRAMES_MAX], cut[7], seen_spi[BURST_MAX], seen_seq[BURST_MAX];
	uint16_t src[BURST_MAX];
	uint8_t l2 = l2s[(b0 >> 1) & 3];
	unsigned int ncut, copies, nf = 0, i, j, nseen = 0;
	bool esp0;

	ncut = in_u8(in) & 7;
	for (i = 0; i < ncut; i++)
		cut[i] = in_u8(in);
	copies = in_u8(in) & 63;
	if (b0 & 0x20)
		copies *= 3;
	do {
		uint32_t len = (uint32_t)in_uint(in, 2);

		len = RTE_MIN(len, (uint32_t)in->n);
		len = RTE_MIN(len, (uint32_t)FRAME_MAX);
		fr[nf] = in->p;
		flen[nf++] = len;
		in->p += len;
		in->n -= len;
	} while (in->n >= 2 && nf < RAW_FRAMES_MAX);

	/* frame 0 alone, in one mbuf */
	reset_windows();
	bu.n = 1;
	bu.l2[0] = l2;
	bu.pkts[0] = mk_form(fr[0], flen[0], l2, FORM_SINGLE);
	esp0 = egw_esp_is_esp(bu.pkts[0]);
	run_burst();
	va.reason = reason_of();
	va.len = 0;
	if (bu.k == 1) {
		va.len = bu.pkts[0]->pkt_len;
		memcpy(va.out, rte_pktmbuf_mtod(bu.pkts[0], uint8_t *), va.len);
		FUZZ_ASSERT(esp0 || !must_be_esp(fr[0], flen[0], l2),
			    "accepted a frame egw_esp_is_esp() calls not ESP");
	}
	release();

	/* as a chain */
	reset_windows();
	bu.pkts[0] = mk_chain(fr[0], flen[0], l2, cut, ncut, (b0 & 0x40) ? 200 : 0);
	poison(bu.pkts[0]);
	(void)egw_esp_is_esp(bu.pkts[0]);
	run_burst();
	same_verdict("as a chain");
	release();

	/* longer than a frame mbuf holds, as a chain: linearizing fails and
	 * there is no mbuf to copy it into */
	if (b0 & 0x80) {
		static uint8_t big[FRAME_MAX + 32];
		uint32_t blen = FRAME_MAX + 1 + flen[0] % 31;

		memcpy(big, fr[0], flen[0]);
		memset(big + flen[0], 0xee, blen - flen[0]);
		reset_windows();
		bu.pkts[0] = mk_chain(big, blen, l2, cut, ncut, 0);
		poison(bu.pkts[0]);
		run_burst();
		FUZZ_ASSERT(reason_of() == EGW_ESP_DROP_NOMEM, "a %u-byte chain: %s, not esp_nomem",
			    blen,
			    reason_of() == NONE ? "accepted" : egw_esp_drop_name(reason_of()));
		release();
	}

	/* shared, cloned or in an external buffer */
	reset_windows();
	bu.pkts[0] = mk_form(fr[0], flen[0], l2, forms[(b0 >> 3) & 3]);
	(void)egw_esp_is_esp(bu.pkts[0]);
	run_burst();
	same_verdict(form_names[(b0 >> 3) & 3]);
	release();

	/* the burst: frame 0, then each further frame followed by a copy of
	 * frame 0, then the remaining copies */
	reset_windows();
	bu.n = 0;
	src[bu.n++] = 0;
	for (i = 1; i < nf; i++) {
		src[bu.n++] = (uint16_t)i;
		if (copies > 0) {
			src[bu.n++] = 0;
			copies--;
		}
	}
	while (copies-- > 0 && bu.n < BURST_MAX)
		src[bu.n++] = 0;
	for (i = 0; i < bu.n; i++) {
		bu.l2[i] = l2;
		bu.pkts[i] = rte_pktmbuf_alloc(pool);
		FUZZ_ASSERT(bu.pkts[i] != NULL, "mbuf pool exhausted");
		memcpy(rte_pktmbuf_append(bu.pkts[i], (uint16_t)flen[src[i]]), fr[src[i]],
		       flen[src[i]]);
		bu.pkts[i]->l2_len = l2;
		fesp[i] = egw_esp_is_esp(bu.pkts[i]);
		/* a freed and reallocated poisoned buffer would trip ASan in the
		 * library's own copy: poison only bursts of one chunk */
		if (bu.n <= EGW_ESP_MAX_BURST)
			poison(bu.pkts[i]);
	}
	run_burst();
	FUZZ_ASSERT((bu.k > 0 && bu.pkts[0]->port == 0) == (va.reason == NONE),
		    "frame 0 first in a burst: %s, alone: %s",
		    bu.k > 0 && bu.pkts[0]->port == 0 ? "accepted" : "dropped",
		    va.reason == NONE ? "accepted" : egw_esp_drop_name(va.reason));
	for (i = 0; i < bu.k; i++) {
		uint16_t t = bu.pkts[i]->port;
		uint32_t spi, seq;

		FUZZ_ASSERT(fesp[t] || !must_be_esp(fr[src[t]], flen[src[t]], l2),
			    "accepted frame %u that egw_esp_is_esp() calls not ESP", t);
		if (t == 0)
			FUZZ_ASSERT(bu.pkts[i]->pkt_len == va.len &&
					    memcmp(rte_pktmbuf_mtod(bu.pkts[i], uint8_t *), va.out,
						   va.len) == 0,
				    "frame 0 in a burst: output differs from alone");
		esp_id(fr[src[t]], flen[src[t]], l2, &spi, &seq);
		for (j = 0; j < nseen; j++)
			FUZZ_ASSERT(seen_spi[j] != spi || seen_seq[j] != seq,
				    "replay: SPI 0x%x sequence %u accepted twice in one burst", spi,
				    seq);
		seen_spi[nseen] = spi;
		seen_seq[nseen++] = seq;
	}
	release();
}

/* ---- sealed mode -------------------------------------------------------- */

enum tweak {
	TW_NONE,
	TW_TUN_SRC,     /* outer source not the SA's (ignored with NAT-T) */
	TW_TUN_DST,     /* outer destination not the SA's */
	TW_TUN_FAMILY,  /* tunnel SA, outer header of the other family */
	TW_NATT_TOGGLE, /* UDP encapsulation where the SA has none, or none where it has */
	TW_NATT_PORT,   /* NAT-T to another port */
	TW_SPI_UNKNOWN, /* an SPI of no SA */
	TW_SPI_OTHER,   /* another SA's SPI */
	TW_ICV,         /* a bit of the ICV */
	TW_CIPHER,      /* a bit of the ciphertext */
	TW_SEQ,         /* sequence number changed after sealing (AAD) */
	TW_IV,          /* IV changed after sealing (nonce) */
	TW_FRAG,        /* IPv4 MF/offset, IPv6 fragment header */
	TW_IP_LONG,     /* IP length past the IP packet */
	TW_IP_SHORT,    /* IP length short of the IP packet */
	TW_UDP_LEN,     /* NAT-T UDP length wrong */
	TW_IP_VER,      /* IPv4 IHL < 5, IPv6 version nibble */
	TW_MAX
};

struct sealed {
	uint8_t frame[FRAME_MAX];
	uint32_t len;
	uint8_t l2;
	enum form form;
	uint32_t seglen;
	bool need_copy;      /* writable() must copy it into a fresh mbuf */
	unsigned int expect; /* NONE = accepted */
	uint8_t out[FRAME_MAX];
	uint32_t out_len;
	/* the AEAD job */
	unsigned int sa;
	uint8_t nonce[12];
	uint8_t aad[12];
	uint32_t aad_len;
	uint32_t ct_off; /* frame offset of the ciphertext */
	uint32_t clen;
	/* after sealing: flip frame[flip_off] by flip_mask (0 = none) */
	uint32_t flip_off;
	uint8_t flip_mask;
};

static struct sealed sp[SEALED_MAX];

/* Burst-start view of each window: what the lock-free check sees. */
static uint64_t snap_top[NSA];
static unsigned int snap_n[NSA];
/* Per burst: SAs past their hard lifetime, mbufs left for copies. */
static bool expired[NSA];
static unsigned int copies_left;

static uint16_t
ip4_cksum(const uint8_t *h, unsigned int len)
{
	uint32_t s = 0;
	unsigned int i;

	for (i = 0; i + 1 < len; i += 2)
		s += get16(h + i);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

/* The frame's L2 header: fixed MACs, VLAN tags up to l2, the ethertype. */
static void
put_l2(uint8_t *f, uint8_t l2, uint16_t et)
{
	static const uint8_t macs[12] = {0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2};
	unsigned int off = 12;

	memcpy(f, macs, 12);
	while (off + 2 < l2) {
		put16(f + off, 0x8100);
		put16(f + off + 2, 100);
		off += 4;
	}
	put16(f + off, et);
}

/* Plaintext of a packet built from the input. Returns its length. */
static uint32_t
build_plain(struct in *in, const struct fsa *s, unsigned int si, uint8_t *pt)
{
	uint8_t i1 = in_u8(in), padb, x;
	uint32_t L = (uint32_t)in_uint(in, 2) % 1401, tfc, plen, pad, i, hl;
	bool v6 = i1 & 1;
	unsigned int sel = (i1 >> 1) & 3, itw = (i1 >> 3) & 7, nhm = i1 >> 6;
	unsigned int t = sel < 2 ? si : sel == 2 ? (si + 1) % NSA : NSA;
	uint8_t proto, nh;

	tfc = in_u8(in);
	padb = in_u8(in);
	x = in_u8(in);
	proto = (x & 1) ? IPPROTO_TCP : IPPROTO_UDP;
	hl = 0;
	if (s->mode == EGW_ESP_MODE_TUNNEL) {
		/* the inner packet */
		memset(pt, 0, v6 ? 40 : 20);
		if (!v6) {
			pt[0] = 0x45;
			put16(pt + 2, 20 + L);
			put16(pt + 4, 0x1234);
			pt[8] = 64;
			pt[9] = proto;
			pt[12] = 172;
			pt[13] = 16;
			pt[15] = 1;
			pol_dst(t, AF_INET, pt + 16);
			put16(pt + 10, ip4_cksum(pt, 20));
			hl = 20;
		} else {
			pt[0] = 0x60;
			put16(pt + 4, L);
			pt[6] = proto;
			pt[7] = 64;
			pt[8] = 0xfd;
			pt[23] = 1;
			pol_dst(t, AF_INET6, pt + 24);
			hl = 40;
		}
		switch (itw) {
		case 4: put16(pt + (v6 ? 4 : 2), get16(pt + (v6 ? 4 : 2)) + 1u + x); break;
		case 5: put16(pt + (v6 ? 4 : 2), get16(pt + (v6 ? 4 : 2)) - 1u - x); break;
		case 6: pt[0] = (uint8_t)((x << 4) | (pt[0] & 0xf)); break;
		case 7:
			if (v6)
				put16(pt + 4, 0);
			else
				pt[0] = (uint8_t)(0x40 | (x & 0xf));
			break;
		default: break;
		}
	}
	for (i = 0; i < L; i++)
		pt[hl + i] = in_u8(in);
	plen = hl + L;
	if (s->mode == EGW_ESP_MODE_TUNNEL) {
		/* TFC padding (RFC 4303 2.7) */
		memset(pt + plen, 0, tfc);
		plen += tfc;
	}
	pad = ((4 - ((plen + 2) & 3)) & 3) + 4 * (padb & 63u); /* at most 255 */
	for (i = 0; i < pad; i++)
		pt[plen + i] = (uint8_t)(i + 1);
	pt[plen + pad] = (uint8_t)pad;
	switch (padb >> 6) {
	case 1:
		if (pad > 0)
			pt[plen + x % pad] ^= 0x80;
		break;
	case 2: pt[plen + pad] = (uint8_t)(pad + 1 + (x & 7)); break;
	case 3: pt[plen + pad] = x; break;
	default: break;
	}
	if (s->mode == EGW_ESP_MODE_TUNNEL)
		nh = v6 ? IPPROTO_IPV6 : IPPROTO_IPIP;
	else
		nh = proto;
	if (nhm == 2)
		nh = x;
	else if (nhm == 3)
		nh = IPPROTO_NONE;
	pt[plen + pad + 1] = nh;
	return plen + pad + 2;
}

/*
 * The reference for a verified plaintext: trailer, next header, inner
 * packet or transport header, then the inbound policy. Fills the expected
 * output frame.
 */
static unsigned int
ref_decap(struct sealed *p, const struct fsa *s, unsigned int si, const uint8_t *pt,
	  uint32_t hdr_len, uint32_t nh_off)
{
	uint32_t clen = p->clen, padlen = pt[clen - 2], plen, i, len, l2 = p->l2;
	uint8_t nh = pt[clen - 1];
	int pol;

	if (padlen + 2 > clen)
		return EGW_ESP_DROP_BAD_PADDING;
	plen = clen - 2 - padlen;
	for (i = 0; i < padlen; i++)
		if (pt[plen + i] != i + 1)
			return EGW_ESP_DROP_BAD_PADDING;
	if (nh == IPPROTO_NONE)
		return EGW_ESP_DROP_DUMMY;
	memcpy(p->out, p->frame, l2);
	if (s->mode == EGW_ESP_MODE_TUNNEL) {
		if (nh == IPPROTO_IPIP && plen >= 20 && (pt[0] >> 4) == 4) {
			len = get16(pt + 2);
			if ((pt[0] & 0xf) < 5 || len < (pt[0] & 0xfu) * 4)
				return EGW_ESP_DROP_BAD_NEXT_HEADER;
			put16(p->out + l2 - 2, 0x0800);
		} else if (nh == IPPROTO_IPV6 && plen >= 40 && (pt[0] >> 4) == 6) {
			len = 40u + get16(pt + 4);
			put16(p->out + l2 - 2, 0x86dd);
		} else {
			return EGW_ESP_DROP_BAD_NEXT_HEADER;
		}
		if (len > plen)
			return EGW_ESP_DROP_BAD_NEXT_HEADER;
		memcpy(p->out + l2, pt, len);
		p->out_len = l2 + len;
		/* RFC 6040 4.2: the outer ECN field (its codepoints: 0 Not-ECT,
		 * 1 ECT(1), 2 ECT(0), 3 CE) into the inner one */
		{
			const uint8_t *oip = p->frame + l2;
			uint8_t *iip = p->out + l2;
			bool o4 = (oip[0] >> 4) == 4, i4 = (pt[0] >> 4) == 4;
			uint8_t o = o4 ? oip[1] & 3 : (oip[1] >> 4) & 3;
			uint8_t e = i4 ? pt[1] & 3 : (pt[1] >> 4) & 3, ne = e;

			if (o == 3 && e == 0)
				return EGW_ESP_DROP_ECN;
			if (o == 3)
				ne = 3;
			else if (o == 1 && e == 2)
				ne = 1;
			if (ne != e && i4) {
				iip[1] = (uint8_t)((iip[1] & ~3) | ne);
				put16(iip + 10, 0);
				put16(iip + 10, ip4_cksum(iip, (iip[0] & 0xfu) * 4));
			} else if (ne != e) {
				iip[1] = (uint8_t)((iip[1] & ~0x30) | ne << 4);
			}
		}
	} else {
		uint8_t *ip = p->out + l2;

		memcpy(ip, p->frame + l2, hdr_len);
		p->out[nh_off] = nh;
		if ((ip[0] >> 4) == 4) {
			put16(ip + 2, hdr_len + plen);
			put16(ip + 10, 0);
			put16(ip + 10, ip4_cksum(ip, hdr_len));
		} else {
			put16(ip + 4, hdr_len - 40 + plen);
		}
		memcpy(ip + hdr_len, pt, plen);
		p->out_len = l2 + hdr_len + plen;
	}
	pol = ref_policy(p->out + l2, p->out_len - l2);
	return pol == (int)si ? NONE : EGW_ESP_DROP_POLICY_MISMATCH;
}

/* Build sealed packet p from the input, and predict its fate. */
static void
build_sealed(struct in *in, struct sealed *p)
{
	static const uint8_t l2s[4] = {14, 18, 22, 14};
	static const uint8_t ext_types[3] = {IPPROTO_HOPOPTS, IPPROTO_DSTOPTS, IPPROTO_ROUTING};
	static uint8_t pt[PT_MAX];
	unsigned int si = in_u8(in) % NSA, so, r;
	const struct fsa *s = &fsas[si];
	uint8_t f1 = in_u8(in), f2, tw, opt = 0, *f = p->frame, *ip, *esp, src[16], dst[16];
	uint64_t seq, inferred;
	uint32_t hdr_len, nh_off, off, esp_len, ip_len, ethpad, clen, lo, i;
	enum tweak t;
	uint8_t family, *nhp;
	bool natt, icv_ok = true, trunc = false, frag = false;
	int32_t esp_len2;

	switch (f1 & 3) {
	case 0: seq = mdl[si].top + 1 + in_u8(in); break;
	case 1: seq = mdl[si].top - in_uint(in, 2); break;
	case 2: seq = mdl[si].top + in_uint(in, 4); break;
	default: seq = in_uint(in, 8); break;
	}
	if (!s->esn)
		seq = (uint32_t)seq; /* only the low half exists */
	p->l2 = l2s[(f1 >> 2) & 3];
	f2 = in_u8(in);
	tw = in_u8(in);
	t = (enum tweak)(f2 & 31);
	if (t >= TW_MAX)
		t = TW_NONE;
	if (f1 & 0x80)
		opt = in_u8(in);
	switch ((f1 >> 5) & 3) {
	case 1:
		p->form = FORM_CHAIN;
		p->seglen = 32u + in_u8(in);
		break;
	case 2: p->form = FORM_SHARED; break;
	case 3: {
		static const enum form f3[4] = {FORM_CLONE, FORM_EXT, FORM_EXT_SHARED, FORM_EXT};

		p->form = f3[in_u8(in) & 3];
		break;
	}
	default: p->form = FORM_SINGLE; break;
	}
	if (f1 & 0x10) {
		clen = (uint32_t)in_uint(in, 2) % 1501;
		for (i = 0; i < clen; i++)
			pt[i] = in_u8(in);
	} else {
		clen = build_plain(in, s, si, pt);
	}
	p->clen = clen;

	/* outer header family and addresses */
	if (s->mode == EGW_ESP_MODE_TUNNEL) {
		family = s->outer;
		if (t == TW_TUN_FAMILY)
			family = family == AF_INET ? AF_INET6 : AF_INET;
		tun_addrs(si, family, src, dst);
		if (t == TW_TUN_SRC)
			src[family == AF_INET ? 3 : 15] ^= 0x40;
		if (t == TW_TUN_DST)
			dst[family == AF_INET ? 3 : 15] ^= 0x40;
	} else {
		/* the transport header's destination selects the policy */
		family = (tw & 0x80) ? AF_INET6 : AF_INET;
		memset(src, 0, sizeof(src));
		src[0] = family == AF_INET ? 172 : 0xfd;
		src[family == AF_INET ? 3 : 15] = 9;
		pol_dst((tw & 0x40) ? (si + 1) % NSA : si, family, dst);
	}
	natt = s->natt != (t == TW_NATT_TOGGLE);
	ethpad = (f2 >> 5) & 3;
	ethpad = ethpad == 0 ? 0 : ethpad == 1 ? 4 : ethpad == 2 ? 60 : tw;

	put_l2(f, p->l2, family == AF_INET ? 0x0800 : 0x86dd);
	ip = f + p->l2;
	if (family == AF_INET) {
		unsigned int words = (f1 & 0x80) ? 1 + opt % 10 : 0;

		memset(ip, 0, 20);
		ip[0] = (uint8_t)(0x45 + words);
		ip[1] = tw;
		put16(ip + 4, (uint16_t)seq);
		if (f2 & 0x80)
			ip[6] = 0x40; /* DF: no matter */
		ip[8] = 64;
		memcpy(ip + 12, src, 4);
		memcpy(ip + 16, dst, 4);
		memset(ip + 20, 1, words * 4); /* NOPs */
		hdr_len = 20 + words * 4;
		nhp = ip + 9;
	} else {
		unsigned int n = (f1 & 0x80) ? 1 + (opt & 3) : 0, k;

		memset(ip, 0, 40);
		ip[0] = 0x60;
		ip[1] = tw;
		ip[7] = 64;
		memcpy(ip + 8, src, 16);
		memcpy(ip + 24, dst, 16);
		nhp = ip + 6;
		hdr_len = 40;
		for (k = 0; k < n; k++) {
			uint32_t el = 8 * (1 + ((opt >> 4) & 3));

			*nhp = ext_types[((opt >> 2) + k) % 3];
			nhp = ip + hdr_len;
			memset(nhp, 0, el);
			nhp[1] = (uint8_t)(el / 8 - 1);
			hdr_len += el;
		}
		if (t == TW_FRAG) {
			/* a fragment header: not reassembled here */
			*nhp = IPPROTO_FRAGMENT;
			nhp = ip + hdr_len;
			memset(nhp, 0, 8);
			hdr_len += 8;
		}
	}
	nh_off = (uint32_t)(nhp - f);
	off = hdr_len;
	if (natt) {
		*nhp = IPPROTO_UDP;
		put16(ip + off, 4500);
		put16(ip + off + 2, s->natt ? s->dport : 4500);
		if (t == TW_NATT_PORT)
			put16(ip + off + 2, 4000u + tw);
		put16(ip + off + 6, 0);
		off += 8;
	} else {
		*nhp = IPPROTO_ESP;
	}
	esp = ip + off;
	esp_len = ESP_HDR_LEN + ESP_IV_LEN + clen + ESP_ICV_LEN;
	ip_len = off + esp_len;
	if (natt)
		put16(ip + hdr_len + 4, 8 + esp_len);
	if (family == AF_INET)
		put16(ip + 2, ip_len);
	else
		put16(ip + 4, ip_len - 40);
	put32(esp, s->spi);
	put32(esp + 4, (uint32_t)seq);
	put32(esp + 8, (uint32_t)(seq >> 32));
	put32(esp + 12, (uint32_t)seq);
	p->ct_off = (uint32_t)(esp + 16 - f);
	memcpy(esp + 16, pt, clen);
	memset(esp + 16 + clen, 0, ESP_ICV_LEN);
	p->len = p->l2 + ip_len + ethpad;
	memset(f + p->l2 + ip_len, 0xee, ethpad);

	/* the job: nonce = salt + IV, AAD = SPI, (high half,) low half */
	p->sa = si;
	memcpy(p->nonce, rt[si]->salt, 4);
	memcpy(p->nonce + 4, esp + 8, 8);
	memcpy(p->aad, esp, 4);
	if (s->esn) {
		put32(p->aad + 4, (uint32_t)(seq >> 32));
		memcpy(p->aad + 8, esp + 4, 4);
		p->aad_len = 12;
	} else {
		memcpy(p->aad + 4, esp + 4, 4);
		p->aad_len = 8;
	}
	p->flip_mask = 0;

	/* tweaks of what the ICV does not cover, and the parse verdict */
	so = si;
	esp_len2 = (int32_t)esp_len;
	switch (t) {
	case TW_SPI_UNKNOWN: put32(esp, 0x7f000000u | tw); break;
	case TW_SPI_OTHER:
		so = (si + 1 + tw % (NSA - 1)) % NSA;
		put32(esp, fsas[so].spi);
		break;
	case TW_ICV:
		p->flip_off = (uint32_t)(esp - f) + esp_len - 1 - tw % ESP_ICV_LEN;
		p->flip_mask = (uint8_t)(1u << (tw >> 5));
		break;
	case TW_CIPHER:
		p->flip_off = p->ct_off + (clen != 0 ? tw % clen : 0);
		p->flip_mask = (uint8_t)(1u << (tw >> 5));
		break;
	case TW_SEQ: put32(esp + 4, (uint32_t)seq ^ (1u + tw)); break;
	case TW_IV: esp[8 + (tw & 7)] ^= (uint8_t)(1u << (tw >> 5)); break;
	case TW_FRAG:
		if (family == AF_INET)
			put16(ip + 6, get16(ip + 6) | ((tw & 1) ? 0x2000 : (1u + tw)));
		frag = true;
		break;
	case TW_IP_LONG: {
		uint32_t d = 1 + tw % 64;

		put16(ip + (family == AF_INET ? 2 : 4),
		      get16(ip + (family == AF_INET ? 2 : 4)) + d);
		esp_len2 += (int32_t)d;
		if (d > ethpad || natt)
			trunc = true;
		break;
	}
	case TW_IP_SHORT: {
		uint32_t d = 1 + tw % 64, cur = get16(ip + (family == AF_INET ? 2 : 4));

		d = RTE_MIN(d, cur);
		put16(ip + (family == AF_INET ? 2 : 4), cur - d);
		esp_len2 -= (int32_t)d;
		if (natt)
			trunc = true;
		break;
	}
	case TW_UDP_LEN:
		if (natt) {
			put16(ip + hdr_len + 4, get16(ip + hdr_len + 4) + 1u + tw);
			trunc = true;
		}
		break;
	case TW_IP_VER:
		if (family == AF_INET)
			ip[0] = (uint8_t)(0x40 | (tw % 5));
		else
			ip[0] = (uint8_t)((((tw % 14) + 7) << 4) |
					  (ip[0] & 0xf)); /* 7..20 mod 16 */
		if ((ip[0] >> 4) == 4 || (ip[0] >> 4) == 6)
			ip[0] = 0x00;
		trunc = true;
		break;
	default: break;
	}
	if (family == AF_INET) {
		put16(ip + 10, 0);
		put16(ip + 10, ip4_cksum(ip, hdr_len));
	}
	if (t == TW_IP_LONG || t == TW_IP_SHORT || t == TW_CIPHER || t == TW_ICV || t == TW_SEQ ||
	    t == TW_IV || so != si)
		icv_ok = false;
	if (esp_len2 < MIN_ESP || (esp_len2 - ESP_HDR_LEN - ESP_IV_LEN - ESP_ICV_LEN) % 4 != 0)
		trunc = true;

	/* the pipeline, as documented: a shared, indirect or external mbuf,
	 * or a chain whose first segment cannot take the rest, is copied into
	 * a fresh mbuf first */
	p->need_copy =
		p->form == FORM_SHARED || p->form == FORM_CLONE || p->form == FORM_EXT_SHARED;
	if (p->form == FORM_CHAIN && p->len > RTE_MIN(p->seglen, (uint32_t)SEG_ROOM))
		p->need_copy = SEG_ROOM - RTE_MIN(p->seglen, (uint32_t)SEG_ROOM) <
			       p->len - RTE_MIN(p->seglen, (uint32_t)SEG_ROOM);
	if (p->need_copy) {
		if (copies_left == 0) {
			p->expect = EGW_ESP_DROP_NOMEM;
			return;
		}
		/* the copy takes a frame mbuf; freeing the original gives the
		 * mbuf of a shared external buffer back to the same pool */
		if (p->form != FORM_EXT_SHARED)
			copies_left--;
	}
	/* a fragment is known before the ESP length is looked at */
	if (frag) {
		p->expect = EGW_ESP_DROP_FRAGMENT;
		return;
	}
	if (trunc) {
		p->expect = EGW_ESP_DROP_TRUNCATED;
		return;
	}
	if (t == TW_SPI_UNKNOWN) {
		p->expect = EGW_ESP_DROP_UNKNOWN_SPI;
		return;
	}
	{
		const struct fsa *o = &fsas[so];
		uint8_t osrc[16], odst[16];
		unsigned int al = family == AF_INET ? 4 : 16;
		bool match = natt == o->natt;

		if (match && natt && get16(ip + hdr_len + 2) != o->dport)
			match = false;
		if (match && o->mode == EGW_ESP_MODE_TUNNEL) {
			tun_addrs(so, o->outer, osrc, odst);
			match = family == o->outer &&
				memcmp(ip + (family == AF_INET ? 16 : 24), odst, al) == 0 &&
				(natt || memcmp(ip + (family == AF_INET ? 12 : 8), osrc, al) == 0);
		}
		if (!match) {
			p->expect = EGW_ESP_DROP_SA_MISMATCH;
			return;
		}
	}
	if (expired[so]) {
		p->expect = EGW_ESP_DROP_LIFETIME;
		return;
	}
	lo = (uint32_t)get16(esp + 4) << 16 | get16(esp + 6);
	inferred = ref_infer(snap_top[so], mdl[so].size, lo, fsas[so].esn);
	r = ref_replay(&mdl[so], snap_top[so], snap_n[so], inferred);
	if (r != NONE) {
		p->expect = r;
		return;
	}
	if (!icv_ok || inferred != seq) {
		p->expect = EGW_ESP_DROP_BAD_ICV;
		return;
	}
	/* the hard lifetime, under the SA's lock before the window update:
	 * exact to the packet, in whichever burst */
	if (s->life != 0 && mdl[si].n >= s->life) {
		p->expect = EGW_ESP_DROP_LIFETIME;
		return;
	}
	r = ref_replay(&mdl[si], mdl[si].top, mdl[si].n, seq);
	if (r != NONE) {
		p->expect = r;
		return;
	}
	mdl[si].acc[mdl[si].n++] = seq;
	if (seq > mdl[si].top)
		mdl[si].top = seq;
	p->expect = ref_decap(p, s, si, pt, hdr_len, nh_off);
}

/* Model state at the start of a burst. */
static void
burst_start(bool drain, unsigned int spare)
{
	unsigned int i;

	for (i = 0; i < NSA; i++) {
		snap_top[i] = mdl[i].top;
		snap_n[i] = mdl[i].n;
		/* every window update counts against the lifetime, whatever
		 * the trailer and policy checks say afterwards */
		expired[i] = fsas[i].life != 0 && mdl[i].n >= fsas[i].life;
	}
	copies_left = drain ? spare : UINT32_MAX;
}

/* Run sp[lo..hi) as one burst and compare with the reference. With drain,
 * only spare mbufs are left in the frame pool while the library runs. */
static void
sealed_burst(unsigned int lo, unsigned int hi, bool drain, unsigned int spare)
{
	static struct rte_mbuf *drained[2048];
	uint32_t exp_cnt[EGW_ESP_DROP_MAX];
	bool esp[SEALED_MAX];
	unsigned int i, k, r, nd = 0;

	bu.n = (uint16_t)(hi - lo);
	memset(exp_cnt, 0, sizeof(exp_cnt));
	for (i = 0; i < bu.n; i++) {
		struct sealed *p = &sp[lo + i];
		struct rte_mbuf *m;

		bu.l2[i] = p->l2;
		if (p->form == FORM_CHAIN) {
			uint32_t cut[6];

			for (k = 0; k < RTE_DIM(cut); k++)
				cut[k] = p->seglen;
			m = mk_chain(p->frame, p->len, p->l2, cut, RTE_DIM(cut), 0);
			/* the harness's own prediction of DPDK's linearize */
			FUZZ_ASSERT(p->need_copy ==
					    (m->nb_segs > 1 &&
					     rte_pktmbuf_tailroom(m) < m->pkt_len - m->data_len),
				    "harness: chain copy prediction");
			poison(m);
		} else {
			m = mk_form(p->frame, p->len, p->l2, p->form);
		}
		bu.pkts[i] = m;
		esp[i] = egw_esp_is_esp(m);
		if (p->expect != NONE)
			exp_cnt[p->expect]++;
	}
	if (trace)
		for (i = 0; i < bu.n; i++)
			fprintf(stderr, "  packet %u: SA 0x%x, form %d%s, %u bytes: %s\n", lo + i,
				fsas[sp[lo + i].sa].spi, (int)sp[lo + i].form,
				sp[lo + i].need_copy ? " (copied)" : "", sp[lo + i].len,
				sp[lo + i].expect == NONE ? "accept"
							  : egw_esp_drop_name(sp[lo + i].expect));
	if (drain) {
		while (rte_mempool_avail_count(pool) > spare) {
			drained[nd] = rte_pktmbuf_alloc(pool);
			FUZZ_ASSERT(drained[nd] != NULL, "drain");
			nd++;
		}
	}
	run_burst();
	for (i = 0; i < nd; i++)
		rte_pktmbuf_free(drained[i]);
	for (r = 0; r < EGW_ESP_DROP_MAX; r++)
		FUZZ_ASSERT(bu.res.drop[r] == exp_cnt[r], "%s: %u dropped, %u expected",
			    egw_esp_drop_name(r), bu.res.drop[r], exp_cnt[r]);
	k = 0;
	for (i = 0; i < bu.n; i++) {
		struct sealed *p = &sp[lo + i];
		bool got = k < bu.k && bu.pkts[k]->port == i;

		FUZZ_ASSERT(got == (p->expect == NONE),
			    "packet %u (SA 0x%x): %s, the reference says %s", lo + i,
			    fsas[p->sa].spi, got ? "accepted" : "dropped",
			    p->expect == NONE ? "accepted" : egw_esp_drop_name(p->expect));
		if (!got)
			continue;
		FUZZ_ASSERT(
			bu.pkts[k]->pkt_len == p->out_len &&
				memcmp(rte_pktmbuf_mtod(bu.pkts[k], uint8_t *), p->out,
				       p->out_len) == 0,
			"packet %u (SA 0x%x): output differs from the reference (%u vs %u bytes)",
			lo + i, fsas[p->sa].spi, bu.pkts[k]->pkt_len, p->out_len);
		/* a chain may cut the headers, which egw_esp_is_esp() reads from
		 * the first segment only */
		if (p->form != FORM_CHAIN)
			FUZZ_ASSERT(esp[i], "accepted packet %u egw_esp_is_esp() calls not ESP",
				    lo + i);
		k++;
	}
	release();
}

static void
sealed_mode(struct in *in, uint8_t b0)
{
	IMB_JOB *jobs[SEALED_MAX];
	uint8_t ok[EGW_ESP_MAX_BURST];
	unsigned int npk = 1 + in_u8(in) % SEALED_MAX, split = 0, i, nj = 0, spare;
	bool drain = b0 & 2;

	spare = (b0 >> 2) & 3;
	if (b0 & 0x10)
		split = in_u8(in) % npk; /* 0: one burst */
	reset_windows();
	burst_start(drain, spare);
	for (i = 0; i < npk; i++) {
		if (i == split && i != 0)
			burst_start(drain, spare);
		build_sealed(in, &sp[i]);
	}

	/* seal with the SAs' keys through the library's job code (an empty
	 * plaintext is refused by the parse before any crypto: no job) */
	esp_jobs_get(ctx, npk, jobs);
	for (i = 0; i < npk; i++) {
		struct sealed *p = &sp[i];

		if (p->clen == 0)
			continue;
		esp_job_aead(jobs[nj], rt[p->sa], true, p->frame + p->ct_off, p->clen, p->nonce,
			     p->aad, p->aad_len, p->frame + p->ct_off + p->clen);
		jobs[nj++]->user_data = (void *)(uintptr_t)i;
	}
	if (nj != 0)
		esp_jobs_run(ctx, nj, jobs, ok);
	for (i = 0; i < npk; i++) {
		FUZZ_ASSERT(sp[i].clen == 0 || ok[i], "sealing job %u failed", i);
		if (sp[i].flip_mask != 0)
			sp[i].frame[sp[i].flip_off] ^= sp[i].flip_mask;
	}

	if (split == 0) {
		sealed_burst(0, npk, drain, spare);
		return;
	}
	sealed_burst(0, split, drain, spare);
	/* the control path notes lifetimes between the bursts; soft and hard
	 * may take a call each */
	for (i = 0; i < 4 && egw_esp_service() != 0; i++)
		;
	sealed_burst(split, npk, drain, spare);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = {data, size};
	uint8_t b0;

	if (size < 2)
		return 0;
	b0 = in_u8(&in);
	if (b0 & 1)
		sealed_mode(&in, b0);
	else
		raw_mode(&in, b0);
	return 0;
}
