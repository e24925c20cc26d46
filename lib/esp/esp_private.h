/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/esp internals shared by its modules: the runtime SA the data path
 * reads, the data-path context, and the interfaces of the replay window,
 * segmentation/fragmentation/ICMP, policy and crypto modules.
 */
#ifndef EGW_ESP_PRIVATE_H
#define EGW_ESP_PRIVATE_H

#include <assert.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <intel-ipsec-mb.h>
#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_spinlock.h>

#include "egw_esp.h"

extern int egw_esp_logtype;
#define ESP_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, egw_esp_logtype, "esp: " fmt "\n", ##__VA_ARGS__)

/* Wire sizes. */
#define ESP_HDR_LEN 8  /* SPI + sequence number */
#define ESP_IV_LEN 8   /* explicit IV: the 64-bit sequence number */
#define ESP_ICV_LEN 16 /* GCM and Poly1305 tags */
#define ESP_SALT_LEN 4
#define ESP_TRAILER_MAX (3 + 2 + ESP_ICV_LEN) /* pad to 4, pad length, next header, ICV */
#define ESP_UDP_LEN 8
#define ESP_TMPL_MAX (40 + ESP_UDP_LEN) /* outer IPv6 header + NAT-T UDP */
/* Room a segment or fragment leaves in front for ESP and a tunnel header. */
#define ESP_HEADROOM_NEED (40 + ESP_UDP_LEN + ESP_HDR_LEN + ESP_IV_LEN)

/* Unaligned big-endian stores and loads: ESP fields sit at any offset
 * behind an Ethernet header. */
static inline void
esp_put16(void *p, uint16_t v)
{
	rte_be16_t b = rte_cpu_to_be_16(v);

	memcpy(p, &b, sizeof(b));
}

static inline void
esp_put32(void *p, uint32_t v)
{
	rte_be32_t b = rte_cpu_to_be_32(v);

	memcpy(p, &b, sizeof(b));
}

static inline void
esp_put64(void *p, uint64_t v)
{
	rte_be64_t b = rte_cpu_to_be_64(v);

	memcpy(p, &b, sizeof(b));
}

static inline uint32_t
esp_get32(const void *p)
{
	rte_be32_t b;

	memcpy(&b, p, sizeof(b));
	return rte_be_to_cpu_32(b);
}

/*
 * True when the IPv4 header at h, len bytes (20 to 60, a multiple of 4),
 * sums to 0xffff in one's complement, as rte_raw_cksum() == 0xffff has it.
 * Its 32-bit words are added as integers: 2^16 is 1 modulo 0xffff, so the
 * folded 16-bit sum is 0xffff exactly when that total is a non-zero
 * multiple of 0xffff, in either byte order; 15 words cannot overflow 64
 * bits. About 25 instructions for 20 bytes, where rte_raw_cksum()'s
 * 16-bit loop takes about 70.
 */
static inline bool
esp_ip4_sum_ok(const uint8_t *h, uint32_t len)
{
	uint32_t w[5], x, i;
	uint64_t s;

	/* the 20 bytes every header has in five loads, options by a loop */
	memcpy(w, h, sizeof(w));
	s = (uint64_t)w[0] + w[1] + w[2] + w[3] + w[4];
	for (i = sizeof(w); i < len; i += 4) {
		memcpy(&x, h + i, sizeof(x));
		s += x;
	}
	return s != 0 && s % 0xffff == 0;
}

/*
 * Walk the IPv6 hop-by-hop, routing and destination-options headers behind
 * the fixed header at ip6: ESP goes after them (RFC 4303 3.1.1). end = bytes
 * present and covered by the payload length. On success *nh is the next
 * header after them, *off its offset from ip6 and *nh_off the offset of the
 * byte naming it; false if a header reaches past end.
 */
static inline bool
esp_ip6_skip_ext(const uint8_t *ip6, uint32_t end, uint8_t *nh, uint32_t *off, uint32_t *nh_off)
{
	uint32_t o = sizeof(struct rte_ipv6_hdr), no = offsetof(struct rte_ipv6_hdr, proto);
	uint8_t h = ip6[no];

	while (h == IPPROTO_HOPOPTS || h == IPPROTO_ROUTING || h == IPPROTO_DSTOPTS) {
		uint32_t len;

		if (o + 8 > end)
			return false;
		len = ((uint32_t)ip6[o + 1] + 1) * 8;
		if (o + len > end)
			return false;
		h = ip6[o];
		no = o;
		o += len;
	}
	*nh = h;
	*off = o;
	*nh_off = no;
	return true;
}

/* May ESP rewrite m's data in place? A direct mbuf, or one on an external
 * buffer (rxtokens regions), that nobody else references. */
static inline bool
esp_mbuf_writable(const struct rte_mbuf *m)
{
	if (rte_mbuf_refcnt_read(m) != 1)
		return false;
	if (RTE_MBUF_DIRECT(m))
		return true;
	return RTE_MBUF_HAS_EXTBUF(m) && rte_mbuf_ext_refcnt_read(m->shinfo) == 1;
}

/* Move an L2 header of l2 bytes from src to dst (tunnel encapsulation and
 * decapsulation), all but its ethertype, which the caller writes: an
 * Ethernet header as 12 fixed bytes (the two lie 36 bytes apart or more),
 * anything else by memmove. */
static inline void
esp_l2_move(uint8_t *dst, const uint8_t *src, uint32_t l2)
{
	if (l2 == RTE_ETHER_HDR_LEN)
		memcpy(dst, src, RTE_ETHER_ADDR_LEN * 2);
	else
		memmove(dst, src, l2);
}

/* ---- replay window (replay.c, esp_replay.h), RFC 6479 bitmap, RFC 4303 A2 ESN ---- */

/* Inbound window. Bits cover [top - size + 1, top]; the bitmap has a spare
 * 64-bit block so advancing never clears a block still in the window. */
struct esp_replay {
	uint64_t top;    /* highest sequence number accepted (full 64 bits) */
	uint32_t size;   /* window in packets, as configured (64..4096) */
	uint32_t nwords; /* bitmap words: power of two >= size/64 + 1 */
	uint64_t bmp[];
};

/* Bytes an esp_replay with a window of size packets needs. */
size_t esp_replay_size(uint32_t size);

/* Set up an empty window; top is the initial highest number (usually 0). */
void esp_replay_init(struct esp_replay *r, uint32_t size, uint64_t top);

/* Full 64-bit sequence number of a received low word: RFC 4303 A2.2 with
 * ESN, seq_lo itself without. */
static inline uint64_t esp_replay_infer(const struct esp_replay *r, uint32_t seq_lo, bool esn);

/* Is seq acceptable? No state changes (the check before decryption).
 * Returns true, or false with *why = EGW_ESP_DROP_REPLAY or
 * EGW_ESP_DROP_OUTSIDE_WINDOW. Sequence number 0 never is (RFC 4303 3.3.3). */
static inline bool esp_replay_check(const struct esp_replay *r, uint64_t seq,
				    enum egw_esp_drop *why);

/* Check again and record seq (after the ICV verified). Same result as
 * esp_replay_check() on the current state. */
static inline bool esp_replay_update(struct esp_replay *r, uint64_t seq, enum egw_esp_drop *why);

#include "esp_replay.h"

/* ---- runtime SA ------------------------------------------------------ */

/* Per-context counters of an SA: one cache line set per context, written
 * only by that context. */
struct esp_sa_lstats {
	uint64_t packets;
	uint64_t bytes;
	uint64_t drop[EGW_ESP_DROP_MAX];
} __rte_cache_aligned;

struct egw_esp_sa {
	/* read-mostly by the data path */
	uint32_t spi;
	rte_be32_t spi_be;
	uint8_t dir;        /* enum egw_esp_dir */
	uint8_t mode;       /* enum egw_esp_mode */
	uint8_t aead;       /* enum egw_esp_aead */
	uint8_t esn;        /* 0/1 */
	uint8_t natt;       /* 0/1 */
	uint8_t tun_family; /* tunnel: AF_INET/AF_INET6 of the outer header */
	uint8_t ttl;
	uint8_t key_len; /* AES key bytes (16/32), ChaCha 32 */
	uint16_t mtu;
	rte_be16_t natt_sport_be;
	rte_be16_t natt_dport_be;
	uint8_t salt[ESP_SALT_LEN];
	uint8_t tun_src[16];
	uint8_t tun_dst[16];
	uint8_t tmpl_len;           /* outbound tunnel: bytes of tmpl; else 0 */
	uint32_t tmpl_sum;          /* IPv4: __rte_raw_cksum() of tmpl (TTL, protocol, addresses) */
	uint64_t life_hard_packets; /* UINT64_MAX = none */
	uint64_t life_hard_bytes;
	uint64_t seq_limit; /* out: last usable number (persisted); acquire-read by workers */
	uint64_t seq_wake;  /* out: a worker whose run ends past it wakes the control path */
	int hard_expired;   /* set by the control path (release), read by workers */
	/* outbound tunnel: the outer IPv4 or IPv6 header (+ UDP with NAT-T)
	 * with every per-packet field 0 (esp_sa_outer_template) */
	uint8_t tmpl[ESP_TMPL_MAX];

	/* outbound sequence counter and lifetime tallies: written by every
	 * context using the SA, so on a line of their own */
	uint64_t seq_next __rte_cache_aligned; /* next number to hand out */
	uint64_t seq_first; /* out: first number of this SA (lifetime in packets) */
	uint64_t bytes_used;
	uint64_t packets_used;

	/* inbound: window and its lock (held only to update the window) */
	rte_spinlock_t lock __rte_cache_aligned;
	struct esp_replay *replay;

	/* key schedule */
	union {
		struct gcm_key_data gcm;
		uint8_t chacha[32];
	} key __rte_cache_aligned;

	struct esp_sa_lstats stats[EGW_ESP_MAX_CTX];

	/* control path only */
	struct egw_esp_sa_conf conf; /* key and salt wiped */
	uint8_t key_fp[16];          /* fingerprint of algorithm, key and salt (both directions) */
	uint64_t seq_block;          /* out: numbers reserved per extension */
	uint64_t seq_ext_tsc;        /* out: timer cycles of the last extension */
	uint32_t policy_refs;        /* PROTECT rules naming this SA */
	bool soft_expired;
	uint64_t life_soft_packets;
	uint64_t life_soft_bytes;
};

/* egw_esp_set_wake()'s function, or NULL */
extern void (*esp_wake)(void);

/* What the data path reads of an outbound IPv4 tunnel SA, template
 * included, is in its first 128 bytes; all it reads before the counters in
 * its first 192. */
static_assert(offsetof(struct egw_esp_sa, tmpl) + sizeof(struct rte_ipv4_hdr) + ESP_UDP_LEN <= 128,
	      "an IPv4 template ends in the SA's first 128 bytes");
static_assert(offsetof(struct egw_esp_sa, tmpl) + ESP_TMPL_MAX <= 192,
	      "the read-mostly part of the SA fits 192 bytes");

/*
 * Build the outer header template of outbound tunnel SA sa from its mode,
 * tunnel family and addresses, TTL and NAT-T ports (outb.c); clears it for
 * other SAs. Called once, before the SA is published.
 */
void esp_sa_outer_template(struct egw_esp_sa *sa);

/* Where ESP goes in a clear packet (outb.c). */
struct esp_out_pkt {
	uint32_t ip_len; /* IP packet length (from its header) */
	uint16_t insert; /* transport: bytes of IP headers before ESP */
	uint16_t nh_off; /* frame offset of the protocol / next-header byte before ESP */
	uint8_t family;  /* AF_INET / AF_INET6 */
	uint8_t df;      /* IPv4 DF set */
	uint8_t tos;     /* IPv4 TOS / IPv6 traffic class */
};

/* Most input pieces the cipher reads one segment's payload from (gso.c); a
 * segment spread over more is copied. */
#define ESP_GSO_PIECES 6

/* Where the payload of a segment made by esp_gso_out() is: iov[1..n] are its
 * pieces in the super-packet, each with where its ciphertext goes in the
 * segment; iov[0] and iov[n + 1] (the segment's clear headers and trailer,
 * encrypted in place) are filled by esp_gso_job(). n = 0: the segment holds
 * its payload itself. */
struct esp_gso_src {
	uint8_t n;
	struct IMB_SGL_IOV iov[ESP_GSO_PIECES + 2];
};

/* ---- data-path context ----------------------------------------------- */

/* The SPD result of the last IPv6 flow a context classified, per direction
 * (spd.c): a steady flow pays one compare per burst, no rte_acl. Valid
 * while gen is the live snapshot's generation. */
struct esp_spd_cache {
	uint64_t gen; /* snapshot generation; 0 = empty */
	struct egw_esp_sa *sa;
	struct egw_esp_sa *prev;
	int32_t slot; /* hit counter slot of the rule, -1 = no rule matched */
	uint8_t action;
	uint8_t key[36]; /* struct spd_key6 as spd.c fills it */
};

/* IPv4 flows of the SPD flow cache, per direction: direct-mapped on a hash
 * of the key, so a burst of many flows (a gateway's subscribers) finds each
 * flow's result for a hash and a compare. */
#define ESP_SPD_CACHE4_BITS 8
#define ESP_SPD_CACHE4_SIZE (1u << ESP_SPD_CACHE4_BITS)

/* One IPv4 flow: the result of key {proto, addr} under snapshot gen
 * (0 = empty). */
struct esp_spd_cache4 {
	uint64_t gen;
	uint64_t addr; /* source and destination, the 8 bytes as the header holds them */
	struct egw_esp_sa *sa;
	struct egw_esp_sa *prev;
	uint64_t *hits; /* the rule's hit counter in the context, or its spd_no_rule */
	uint8_t proto;
	uint8_t action;
};

struct egw_esp_ctx {
	IMB_MGR *mgr;
	unsigned int idx;
	struct rte_mempool *pool;
	struct rte_mempool *indirect_pool; /* for rte_ipv4_fragment_packet */
	const char *arch;
	uint32_t frame_max;   /* largest frame one mbuf of pool holds */
	uint16_t ip_id;       /* counts outer IPv4 ids of tunnel packets (outb.c) */
	uint16_t ingress_mtu; /* MTU of the packets' ingress link; 0 = EGW_ESP_MTU_DEF */
	uint32_t icmp_tokens; /* ICMP too-big rate limit (outb.c) */
	uint64_t icmp_tsc;
	/* per-job scratch: nonce (salt + IV), AAD, computed tag, packet */
	uint8_t iv[EGW_ESP_MAX_BURST][12];
	uint8_t aad[EGW_ESP_MAX_BURST][12];
	uint8_t tag[EGW_ESP_MAX_BURST][ESP_ICV_LEN];
	uint8_t ok[EGW_ESP_MAX_BURST];
	/* outbound: headers parsed by the size check, per slot of a run */
	struct esp_out_pkt pre[EGW_ESP_MAX_BURST];
	uint8_t pre_ok[EGW_ESP_MAX_BURST];
	/* outbound NAT-T over IPv6: frame offsets of the UDP header (0: none)
	 * and of the pseudo-header destination, per slot of a run */
	uint16_t udp6_off[EGW_ESP_MAX_BURST];
	uint16_t udp6_dst[EGW_ESP_MAX_BURST];
	/* outbound GSO, per slot of a run: payload the cipher reads from the
	 * super-packet (gso.c), its GCM context, and the super-packets to free
	 * once the run's jobs are done; every n is 0 between runs */
	struct esp_gso_src gso[EGW_ESP_MAX_BURST];
	struct gcm_context_data gso_gcm[EGW_ESP_MAX_BURST];
	struct rte_mbuf *gso_keep[EGW_ESP_MAX_BURST];
	uint16_t n_gso_keep;
	uint8_t gso_oop;    /* 1: AES-GCM segments read their payload from the super-packet */
	uint8_t gcm_direct; /* 1: AES-GCM by direct calls, no job (esp_crypto.h) */
	struct egw_esp_ctx_stats st __rte_cache_aligned;
	struct esp_spd_cache spd_cache6[2];                       /* [direction] */
	struct esp_spd_cache4 spd_cache4[2][ESP_SPD_CACHE4_SIZE]; /* [direction][hash] */
	uint64_t policy_hits[2][EGW_ESP_MAX_POLICY];
	uint64_t spd_no_rule; /* what IPv4 cache hits of no rule count into; never read */
};

/* Every drop, bypass and ICMP is counted in c->st where it happens, and
 * added to the caller's struct egw_esp_res (which accumulates). */

/* ---- segmentation, fragmentation, ICMP (gso.c) ------------------------ */

/*
 * Segment the TCP packet in frame m (l2_len set; IPv4 or IPv6 with
 * hop-by-hop/routing/destination-options headers; TCP directly or inside one
 * ipip/ip6tnl level) into frames carrying at most mss TCP payload bytes each.
 * Every segment is a fresh single-mbuf frame from pool: a copy of the L2
 * header, IP header(s) with their lengths, ids (+1 per segment) and IPv4
 * checksums, TCP header with its sequence number, flags (FIN/PSH on the last
 * only, CWR on the first only) and full checksum, then the payload; at least
 * ESP_HEADROOM_NEED bytes of headroom and ESP_TRAILER_MAX of tailroom. m may
 * be a multi-segment chain and may carry RTE_MBUF_F_TX_TCP_SEG (its checksum
 * fields are ignored). m is not freed.
 * Returns the number of segments (1..max), or 0 with *why set
 * (EGW_ESP_DROP_BAD_INNER: not TCP, malformed, or more than max segments;
 * EGW_ESP_DROP_NOMEM).
 */
unsigned int esp_gso_tcp(const struct rte_mbuf *m, uint16_t mss, struct rte_mempool *pool,
			 struct rte_mbuf *segs[], unsigned int max, enum egw_esp_drop *why);

/*
 * esp_gso_tcp() for the outbound path of context c, segment i going to slot
 * slot + i of the current run of SA sa (slot + the number of segments <=
 * EGW_ESP_MAX_BURST). With c->gso_oop set (off by default: slower with
 * IPsec-MB 1.3, see gso.c) and an AES-GCM SA, the segments' payload is not
 * copied: it is only summed for the TCP checksums, and c->gso[] says where it
 * is, for esp_gso_job() to encrypt it from there into the segment. On success m is
 * taken: freed now, or kept until esp_gso_run_done() when a segment still
 * reads from it. On failure (0, *why set) m is still the caller's.
 */
unsigned int esp_gso_out(struct egw_esp_ctx *c, const struct egw_esp_sa *sa, struct rte_mbuf *m,
			 uint16_t mss, struct rte_mbuf *segs[], unsigned int slot,
			 enum egw_esp_drop *why);

/*
 * Turn job, filled by esp_job_aead() to encrypt slot's segment in place,
 * into one that reads the payload from the super-packet (c->gso[slot].n must
 * be non-zero). False if the segment no longer has the payload room the
 * pieces aim at (the job must then not run).
 */
bool esp_gso_job(struct egw_esp_ctx *c, IMB_JOB *job, unsigned int slot);

/* After the jobs of a run of n slots have completed: clear the slots' GSO
 * state and free the super-packets they read from. */
void esp_gso_run_done(struct egw_esp_ctx *c, unsigned int n);

/*
 * Where the TCP payload starts in frame m and how many bytes it has, for
 * packets esp_gso_tcp() can segment; false if m is not such a packet.
 * hdr_len = bytes from frame start to the first payload byte.
 */
bool esp_gso_tcp_probe(const struct rte_mbuf *m, uint32_t *hdr_len, uint32_t *payload_len);

/*
 * Fragment the IPv4 packet in frame m (DF clear) into frames whose IP
 * packets are at most ip_mtu bytes, each a fresh single-mbuf frame from pool
 * with the L2 header copied and the room esp_gso_tcp() leaves. m is not freed.
 * Returns the number of fragments, or 0 with *why set.
 */
unsigned int esp_frag_ipv4(const struct egw_esp_ctx *c, struct rte_mbuf *m, uint16_t ip_mtu,
			   struct rte_mbuf *frags[], unsigned int max, enum egw_esp_drop *why);

/*
 * An ICMP "fragmentation needed" (IPv4, type 3 code 4) or ICMPv6 "packet
 * too big" for the sender of frame m, advertising mtu, from src (or m's
 * destination when src is NULL): a frame with m's L2 header, MACs swapped,
 * quoting as much of m as the RFCs allow (576 / 1280 bytes in all).
 * NULL if m is itself an ICMP error, a fragment other than the first, or
 * multicast, or no mbuf is free.
 */
struct rte_mbuf *esp_icmp_too_big(const struct rte_mbuf *m, uint16_t mtu, const uint8_t *src,
				  struct rte_mempool *pool);

/* ---- security policy database (spd.c) -------------------------------- */

/* Lookup actions beyond enum egw_esp_action: drops the SPD decides. */
#define ESP_ACT_DEF_DISCARD 3   /* no rule matched; the default discards */
#define ESP_ACT_PROTO_UNKNOWN 4 /* protocol unreadable, no discard rule matched */
#define ESP_ACT_NOT_IP 5        /* not IP, cut short, or version not the ethertype's */
#define ESP_ACT_MAX 6

/* Lookup of one direction: for each frame (l2_len set), the matching rule's
 * action (enum egw_esp_action or ESP_ACT_*) and SA (NULL unless PROTECT),
 * and in prev (if not NULL) the SA that one replaced, still accepted
 * inbound (NULL if none); no match = the direction's default. Counts hits
 * in c->policy_hits. */
void esp_spd_lookup(struct egw_esp_ctx *c, enum egw_esp_dir dir, struct rte_mbuf *pkts[],
		    uint16_t n, uint8_t action[], struct egw_esp_sa *sa[],
		    struct egw_esp_sa *prev[]);

/* The inbound policy check of n decapsulated frames, frame i having come
 * through SA via[i]: ok[i] = 1 when the inbound rule it matches protects it
 * with via[i] or with the SA via[i] replaced, as esp_spd_lookup() decides
 * it. A frame whose IPv4 flow the context's flow cache holds is decided by
 * that entry, without a lookup; the others are classified as
 * esp_spd_lookup() classifies them. */
void esp_spd_check_in(struct egw_esp_ctx *c, struct rte_mbuf *pkts[], uint16_t n,
		      struct egw_esp_sa *const via[], uint8_t ok[]);

/* Every PROTECT rule of dir naming old names nsa instead (one snapshot);
 * inbound, old stays accepted as the rules' predecessor until
 * esp_spd_forget_prev(). Moves the references. Returns the number of rules
 * changed, -ENOENT if none names old, or -errno. (control path) */
int esp_spd_replace_sa(enum egw_esp_dir dir, struct egw_esp_sa *old, struct egw_esp_sa *nsa,
		       char *err, size_t errlen);
/* Rules stop accepting sa as predecessor. Returns how many did, or -errno. */
int esp_spd_forget_prev(enum egw_esp_dir dir, struct egw_esp_sa *sa);
/* Rules of dir protecting with sa (predecessor references not counted). */
uint32_t esp_spd_protect_refs(enum egw_esp_dir dir, const struct egw_esp_sa *sa);

/* Is the SA named by a PROTECT rule of its direction? (control path) */
bool esp_spd_refs_sa(enum egw_esp_dir dir, uint32_t spi);

/* Sum of c->policy_hits[dir][slot] over the data-path contexts (ctx.c). */
uint64_t esp_ctx_sum_policy_hits(enum egw_esp_dir dir, unsigned int slot);

int esp_spd_init(void);
void esp_spd_fini(void);

/* ---- SA table (sa.c) --------------------------------------------------- */

/* Inbound SA by SPI (data path, lock-free); NULL if none. */
struct egw_esp_sa *esp_sa_lookup_in(uint32_t spi);
/* Bulk form: sa[i] = SA of spi[i] or NULL. */
void esp_sa_lookup_in_bulk(const uint32_t spi[], unsigned int n, struct egw_esp_sa *sa[]);
/* SA by SPI and direction (control path). */
struct egw_esp_sa *esp_sa_find(uint32_t spi, enum egw_esp_dir dir);
/* Is UDP port (network order) a NAT-T port of an inbound SA? (data path) */
bool esp_natt_port(rte_be16_t port_be);
/* Is a (4 or 16 bytes, network order) one of edgegw's ESP addresses: an
 * inbound tunnel's destination or an address the application registered?
 * (data path, lock-free) */
bool esp_local_addr(uint8_t family, const uint8_t *a);
/* A local address of family (16 bytes, IPv4 in the first 4) to send ICMP
 * errors from, or NULL if edgegw has none. (data path) */
const uint8_t *esp_icmp_src(uint8_t family);

extern struct rte_rcu_qsbr *esp_qsbr;

#endif /* EGW_ESP_PRIVATE_H */
