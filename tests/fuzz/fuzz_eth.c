/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the Ethernet classifier (lib/eth).
 *
 * Input layout:
 *   byte 0     bits 0-1: segments - 1 (1..4); bits 2-7: where to cut a
 *              truncated copy of the frame (see below)
 *   bytes 1-3  length of segments 1..3 (0..255 each; the last segment takes
 *              what is left, a segment may be empty)
 *   bytes 4-   the frame, from the destination MAC
 *
 * Each input becomes a burst of six mbufs: the frame as that chain, two fixed
 * good frames, the frame in one segment, a truncated copy in two segments and
 * a fixed bad frame. Checked:
 *  - the mbuf path and the flat path (egw_eth_classify_buf on a malloc'd
 *    copy of exactly the frame's bytes, so ASan sees any over-read) agree on
 *    class, l2_len, destination, tags and inner ethertype;
 *  - both agree with a naive reference classifier written here from the rules;
 *  - good frames: l2_len <= pkt_len, l2_len = 14 + 4 * n_vlan, the mbuf's
 *    VLAN fields and flags match the bytes;
 *  - the return value counts the good frames, they come first in their
 *    original order, the BAD ones last;
 *  - egw_eth_reclassify_ip() on the one-segment copy, its ethertype switched
 *    to the other IP family, agrees with a full classification.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "egw_eth.h"
#include "fuzz_eal.h"
#include "fuzz_common.h"

#define FRAME_MAX 4096
#define IN_HDR 4
#define BURST 6

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct rte_mempool *pool;

static const struct egw_eth_port port = {
	.mac = {.addr_bytes = {0x02, 0x00, 0x5e, 0x10, 0x00, 0x01}},
};

/* 802.1Q-tagged IPv4 to the port, and a 13-byte runt. */
static const uint8_t frame_good[] = {
	0x02, 0x00, 0x5e, 0x10, 0x00, 0x01, 0x02, 0x00, 0x5e, 0x10, 0x00, 0x99,
	0x81, 0x00, 0x00, 0x64, 0x08, 0x00, 0x45, 0x00, 0x00, 0x14, 0x00, 0x00,
};
static const uint8_t frame_bad[] = {
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0x00, 0x5e, 0x10, 0x00, 0x99, 0x08,
};

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	RTE_SET_USED(argc);
	if (fuzz_eal_init((*argv)[0]) < 0) {
		fprintf(stderr, "fuzz_eth: rte_eal_init: %s\n", rte_strerror(rte_errno));
		abort();
	}
	pool = rte_pktmbuf_pool_create("fuzz_eth", 255, 0, 0, RTE_PKTMBUF_HEADROOM + FRAME_MAX,
				       rte_socket_id());
	if (pool == NULL || egw_eth_init() != 0) {
		fprintf(stderr, "fuzz_eth: cannot set up the mbuf pool or the dynfield\n");
		abort();
	}
	return 0;
}

static uint16_t
be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* The rules, written out plainly: class and l2_len (0 when bad). */
static uint8_t
ref_classify(const uint8_t *p, uint32_t len, uint16_t *l2)
{
	uint32_t tp = 12; /* offset of the type/length field */
	unsigned int nv = 0;
	uint16_t t;

	*l2 = 0;
	if (len < 14)
		return EGW_ETH_CLS_BAD;
	for (;;) {
		t = be16(p + tp);
		if (t != 0x8100 && t != 0x88a8 && t != 0x9100)
			break;
		if (nv == 2) {
			*l2 = tp + 2;
			return EGW_ETH_CLS_VLAN_DEEP;
		}
		if (len < tp + 6)
			return EGW_ETH_CLS_BAD;
		tp += 4;
		nv++;
	}
	if (t <= 1500) {
		if (t < 2 || len < tp + 2 + t)
			return EGW_ETH_CLS_BAD;
		*l2 = tp + 2;
		return p[tp + 2] == 0xff && p[tp + 3] == 0xff ? EGW_ETH_CLS_RAW_8023
							      : EGW_ETH_CLS_LLC;
	}
	if (t < 0x0600)
		return EGW_ETH_CLS_BAD;
	*l2 = tp + 2;
	switch (t) {
	case 0x0800: return EGW_ETH_CLS_IPV4;
	case 0x86dd: return EGW_ETH_CLS_IPV6;
	case 0x0806: return EGW_ETH_CLS_ARP;
	case 0x8863: return EGW_ETH_CLS_PPPOE_DISC;
	case 0x8864: return EGW_ETH_CLS_PPPOE_SESS;
	default: return EGW_ETH_CLS_OTHER;
	}
}

/* An mbuf chain holding len bytes, cut into segments of seg[0..n_seg-2] bytes and the rest. */
static struct rte_mbuf *
make_chain(const uint8_t *frame, uint32_t len, const uint8_t *seg, unsigned int n_seg)
{
	struct rte_mbuf *head = NULL;
	uint32_t off = 0;
	unsigned int i;

	for (i = 0; i < n_seg; i++) {
		uint32_t n = i + 1 < n_seg ? RTE_MIN((uint32_t)seg[i], len - off) : len - off;
		struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
		char *d;

		FUZZ_ASSERT(m != NULL, "mbuf pool exhausted (leak?)");
		d = rte_pktmbuf_append(m, n);
		FUZZ_ASSERT(d != NULL, "segment does not fit the data room");
		memcpy(d, frame + off, n);
		off += n;
		if (head == NULL)
			head = m;
		else
			FUZZ_ASSERT(rte_pktmbuf_chain(head, m) == 0, "rte_pktmbuf_chain");
	}
	/* Fields the classifier must overwrite. */
	head->ol_flags |= RTE_MBUF_F_RX_VLAN | RTE_MBUF_F_RX_QINQ;
	head->packet_type = 0xdeadbeef;
	head->l2_len = 99;
	memset(egw_eth_meta(head), 0xee, sizeof(struct egw_eth_meta));
	return head;
}

/* Check one classified mbuf against the flat path and the reference. */
static void
check_one(struct rte_mbuf *m, const uint8_t *frame, uint32_t len)
{
	const struct egw_eth_meta *mm = egw_eth_meta(m);
	struct egw_eth_meta fm;
	uint8_t *copy = malloc(len > 0 ? len : 1);
	uint16_t l2, ref_l2;
	uint8_t ref_cls;

	FUZZ_ASSERT(copy != NULL, "malloc");
	memcpy(copy, frame, len);
	l2 = egw_eth_classify_buf(&port, copy, len, &fm);
	ref_cls = ref_classify(copy, len, &ref_l2);
	free(copy);

	FUZZ_ASSERT(m->pkt_len == len, "pkt_len");
	FUZZ_ASSERT(fm.cls < EGW_ETH_CLS_MAX, "class in range");
	FUZZ_ASSERT(mm->cls == fm.cls, "mbuf and flat class agree");
	FUZZ_ASSERT(m->l2_len == l2, "mbuf and flat l2_len agree");
	FUZZ_ASSERT(fm.cls == ref_cls, "class agrees with the reference");
	FUZZ_ASSERT(l2 == ref_l2, "l2_len agrees with the reference");
	if (fm.cls == EGW_ETH_CLS_BAD) {
		FUZZ_ASSERT(l2 == 0, "bad frame has l2_len 0");
		FUZZ_ASSERT(m->packet_type == RTE_PTYPE_UNKNOWN, "bad frame has no ptype");
		FUZZ_ASSERT((m->ol_flags & (RTE_MBUF_F_RX_VLAN | RTE_MBUF_F_RX_QINQ)) == 0,
			    "bad frame has no VLAN flags");
		return;
	}
	FUZZ_ASSERT(l2 <= m->pkt_len, "l2_len <= pkt_len");
	FUZZ_ASSERT(mm->dst == fm.dst && fm.dst < EGW_ETH_DST_MAX, "destination agrees");
	FUZZ_ASSERT(mm->n_vlan == fm.n_vlan && fm.n_vlan <= EGW_ETH_MAX_VLAN, "n_vlan agrees");
	FUZZ_ASSERT(mm->proto == fm.proto, "proto agrees");
	FUZZ_ASSERT(l2 == RTE_ETHER_HDR_LEN + 4 * fm.n_vlan, "l2_len = 14 + 4 * n_vlan");
	FUZZ_ASSERT((m->packet_type & RTE_PTYPE_L2_MASK) != 0, "good frame has an L2 ptype");
	if (fm.n_vlan == 0) {
		FUZZ_ASSERT((m->ol_flags & (RTE_MBUF_F_RX_VLAN | RTE_MBUF_F_RX_QINQ)) == 0,
			    "untagged: no VLAN flags");
	} else if (fm.n_vlan == 1) {
		FUZZ_ASSERT((m->ol_flags & (RTE_MBUF_F_RX_VLAN | RTE_MBUF_F_RX_QINQ)) ==
				    RTE_MBUF_F_RX_VLAN,
			    "one tag: RX_VLAN only");
		FUZZ_ASSERT(m->vlan_tci == be16(frame + 14), "vlan_tci");
	} else {
		FUZZ_ASSERT((m->ol_flags & (RTE_MBUF_F_RX_VLAN | RTE_MBUF_F_RX_QINQ)) ==
				    (RTE_MBUF_F_RX_VLAN | RTE_MBUF_F_RX_QINQ),
			    "two tags: both flags");
		FUZZ_ASSERT(m->vlan_tci_outer == be16(frame + 14), "vlan_tci_outer");
		FUZZ_ASSERT(m->vlan_tci == be16(frame + 18), "vlan_tci (inner)");
	}
}

/*
 * egw_eth_reclassify_ip() on the one-segment copy m of frame, classified:
 * an IP frame's last ethertype switched to the other family gives what a
 * full classification of the switched frame gives; any other frame is left
 * as it is (BAD returned).
 */
static void
check_reclassify(struct rte_mbuf *m, const uint8_t *frame, uint32_t len)
{
	static uint8_t copy[FRAME_MAX];
	struct egw_eth_meta before = *egw_eth_meta(m);
	uint32_t ptype = m->packet_type;
	struct rte_mbuf *r;
	uint8_t *et;

	if (before.cls != EGW_ETH_CLS_IPV4 && before.cls != EGW_ETH_CLS_IPV6) {
		if (before.cls != EGW_ETH_CLS_BAD && m->l2_len >= 2 && m->l2_len <= m->data_len &&
		    before.proto != RTE_BE16(RTE_ETHER_TYPE_IPV4) &&
		    before.proto != RTE_BE16(RTE_ETHER_TYPE_IPV6)) {
			FUZZ_ASSERT(egw_eth_reclassify_ip(m) == EGW_ETH_CLS_BAD,
				    "reclassify: not IP gives BAD");
			FUZZ_ASSERT(memcmp(&before, egw_eth_meta(m), sizeof(before)) == 0 &&
					    m->packet_type == ptype,
				    "reclassify: not IP changes nothing");
		}
		return;
	}
	memcpy(copy, frame, len);
	et = copy + m->l2_len - 2;
	et[0] = before.cls == EGW_ETH_CLS_IPV4 ? 0x86 : 0x08;
	et[1] = before.cls == EGW_ETH_CLS_IPV4 ? 0xdd : 0x00;
	memcpy(rte_pktmbuf_mtod(m, uint8_t *) + m->l2_len - 2, et, 2);
	r = make_chain(copy, len, (const uint8_t[]){0}, 1);
	FUZZ_ASSERT(egw_eth_classify_burst(&port, &r, 1) == 1, "reclassify: switched frame good");
	FUZZ_ASSERT(egw_eth_reclassify_ip(m) == egw_eth_meta(r)->cls, "reclassify: class");
	FUZZ_ASSERT(memcmp(egw_eth_meta(m), egw_eth_meta(r), sizeof(struct egw_eth_meta)) == 0,
		    "reclassify: metadata of a full classification");
	FUZZ_ASSERT(m->packet_type == r->packet_type && m->l2_len == r->l2_len,
		    "reclassify: packet_type and l2_len of a full classification");
	rte_pktmbuf_free(r);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rte_mbuf *orig[BURST], *pkts[BURST];
	const uint8_t *frames[BURST];
	uint32_t lens[BURST];
	static const uint8_t one_seg[1];
	uint8_t cut_seg[1];
	const uint8_t *frame;
	unsigned int i, pos, n_good = 0;
	uint32_t len, cut;
	uint16_t ret;

	if (size < IN_HDR)
		return 0;
	frame = data + IN_HDR;
	len = RTE_MIN(size - IN_HDR, (size_t)FRAME_MAX);
	cut = len > 0 ? ((uint32_t)(data[0] >> 2) * 7u) % (len + 1) : 0;
	cut_seg[0] = data[1];

	frames[0] = frame;
	lens[0] = len;
	frames[1] = frame_good;
	lens[1] = sizeof(frame_good);
	frames[2] = frame;
	lens[2] = len;
	frames[3] = frame;
	lens[3] = cut;
	frames[4] = frame_bad;
	lens[4] = sizeof(frame_bad);
	frames[5] = frame_good;
	lens[5] = sizeof(frame_good);

	orig[0] = make_chain(frame, len, data + 1, (data[0] & 3) + 1);
	orig[1] = make_chain(frame_good, sizeof(frame_good), one_seg, 1);
	orig[2] = make_chain(frame, len, one_seg, 1);
	orig[3] = make_chain(frame, cut, cut_seg, 2);
	orig[4] = make_chain(frame_bad, sizeof(frame_bad), one_seg, 1);
	orig[5] = make_chain(frame_good, sizeof(frame_good), one_seg, 1);
	memcpy(pkts, orig, sizeof(pkts));

	ret = egw_eth_classify_burst(&port, pkts, BURST);

	for (i = 0; i < BURST; i++) {
		check_one(orig[i], frames[i], lens[i]);
		if (egw_eth_meta(orig[i])->cls != EGW_ETH_CLS_BAD)
			n_good++;
	}
	FUZZ_ASSERT(ret == n_good, "return value counts the good frames");
	pos = 0;
	for (i = 0; i < BURST; i++)
		if (egw_eth_meta(orig[i])->cls != EGW_ETH_CLS_BAD)
			FUZZ_ASSERT(pkts[pos++] == orig[i], "good frames first, in order");
	for (; pos < BURST; pos++)
		FUZZ_ASSERT(egw_eth_meta(pkts[pos])->cls == EGW_ETH_CLS_BAD, "bad frames last");
	for (i = 0; i < BURST; i++) {
		unsigned int j, seen = 0;

		for (j = 0; j < BURST; j++)
			seen += pkts[j] == orig[i];
		FUZZ_ASSERT(seen == 1, "the burst is a permutation of its input");
	}

	check_reclassify(orig[2], frame, len);

	for (i = 0; i < BURST; i++)
		rte_pktmbuf_free(orig[i]);
	return 0;
}
