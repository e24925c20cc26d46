/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * PPPoE pass/active filters (private to lib/pppoe): a pcap-filter(7)
 * expression compiled once on the control path (filter.c) and run on the
 * data path, per data frame of a bound session, in either direction
 * (pppoe_filter_match() below).
 *
 * What a filter sees: the frame as an Ethernet II frame (libpcap's
 * DLT_EN10MB) carrying IPv4 or IPv6: 14 bytes of Ethernet header at the
 * start of the mbuf's data (rte_pktmbuf_mtod()), then the IP packet; the
 * frame may have several segments. Upstream that is the session's frame once
 * decapsulated (the client's and the concentrator's MAC addresses, no VLAN
 * tag, no PPPoE header), downstream the IP frame before encapsulation. The
 * caller must hand over the frame in that shape (l2_len 14 and the IP
 * ethertype at bytes 12-13): a frame with a VLAN tag in front of the IP
 * header would only match `vlan and ...`. `len`, `less` and `greater`
 * compare the mbuf's pkt_len.
 *
 * Not available: the direction qualifiers `inbound` and `outbound` do not
 * exist at DLT_EN10MB (an Ethernet frame has no direction; libpcap on Linux
 * compiles them into a load of the socket's packet type, which a DPDK frame
 * does not have: refused, ENOTSUP, like `ifindex`); a filter is attached to
 * one direction instead. Also refused: `ip broadcast` (it needs a netmask;
 * compiled with PCAP_NETMASK_UNKNOWN) and `protochain` (a loop). Host,
 * network and port names are resolved once, when the filter is compiled
 * (DNS, /etc/services, /etc/ethers: blocking): prefer numbers.
 *
 * Also refused: an expression whose optimised program reads libpcap scratch
 * memory it never writes (a libpcap 1.10 optimiser bug seen on long
 * arithmetic; EINVAL, with a message saying so).
 *
 * Semantics are libpcap's (pcap_offline_filter()), also where DPDK's differ
 * (a shift by 32 or more gives 0). The JIT is DPDK's x86-64 one, with four
 * of its bugs and the converter's worked around (filter.c); on other
 * architectures the interpreter runs the program (DPDK's arm64 JIT is not
 * checked against libpcap here).
 *
 * Limits: an expression of at most PPPOE_FILTER_EXPR_MAX characters, a
 * program of at most PPPOE_FILTER_INS_MAX eBPF instructions, packet
 * offsets of at most PPPOE_FILTER_OFF_MAX (a load behind the frame's end, or
 * at a computed offset above that, makes the whole filter not match, as in
 * libpcap).
 *
 * Threads: compile and free on the control path; the object is read-only
 * once compiled, so any number of lcores may match against one filter at
 * once (the JIT code and the interpreter keep their state on the caller's
 * stack). A filter the data path may still read is freed only after an RCU
 * grace period.
 */
#ifndef PPPOE_FILTER_H
#define PPPOE_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_bpf.h>
#include <rte_common.h>
#include <rte_mbuf.h>

/** Longest expression, in characters (without the terminating NUL). */
#define PPPOE_FILTER_EXPR_MAX 1024
/** Largest program, in eBPF instructions (after conversion and repairs). */
#define PPPOE_FILTER_INS_MAX 4096
/** Largest packet offset a filter reads at (the libpcap snap length). */
#define PPPOE_FILTER_OFF_MAX 65535

/** A compiled filter. Read-only once pppoe_filter_compile() returns it. */
struct pppoe_filter {
	/** Native code of the program (its argument is the mbuf), NULL when
	 * it is not JIT-compiled (not x86-64): then the interpreter runs it. */
	uint64_t (*jit)(void *mbuf);
	struct rte_bpf *bpf; /**< the loaded program (rte_bpf_exec()) */
	uint32_t nb_cbpf;    /**< classic BPF instructions from libpcap */
	uint32_t nb_ins;     /**< eBPF instructions loaded */
	size_t jit_size;     /**< bytes of native code, 0 without the JIT */
	char expr[];         /**< the expression as given, NUL-terminated */
};

/**
 * Compile a pcap-filter(7) expression into a filter (control path).
 *
 * libpcap compiles it for DLT_EN10MB (optimised, netmask unknown),
 * rte_bpf_convert() turns the classic BPF into eBPF, the result is rewritten
 * around four DPDK 22.11 bugs, to libpcap's semantics and hardened (see
 * filter.c), then rte_bpf_load() validates it and, on x86-64, compiles it
 * to native code.
 *
 * @param expr
 *   The expression. "" is a filter that matches every frame.
 * @param socket
 *   NUMA socket of the object (SOCKET_ID_ANY: any).
 * @param err
 *   Filled with a message on failure (libpcap's own text for an expression
 *   it refuses); may be NULL when errlen is 0.
 * @param errlen
 *   Size of err.
 * @return
 *   The filter, or NULL with rte_errno set:
 *   - EINVAL: expr NULL, or refused by libpcap (syntax, unknown name,
 *     `ip broadcast`, ...), a read of unwritten scratch memory, or refused
 *     by rte_bpf_load()'s validator (its reason is in DPDK's log);
 *   - E2BIG: expression or program over its limit, or an offset over
 *     PPPOE_FILTER_OFF_MAX;
 *   - ENOTSUP: Linux socket metadata (`inbound`, `outbound`, `ifindex`),
 *     a loop (`protochain`), or anything else rte_bpf_convert() does not
 *     convert;
 *   - ENOMEM.
 */
struct pppoe_filter *pppoe_filter_compile(const char *expr, int socket, char *err, size_t errlen);

/**
 * Free a filter (control path). The caller frees it only once no data-path
 * thread can still be running it: after it was unpublished, an RCU
 * (rte_rcu_qsbr) grace period. NULL is a no-op.
 */
void pppoe_filter_free(struct pppoe_filter *f);

/**
 * Does a frame match (data path)? Runs the native code when there is some,
 * the interpreter otherwise.
 *
 * @param f
 *   The filter; NULL matches every frame (no filter configured).
 * @param m
 *   The frame, as described at the top of this file; it is only read.
 * @return
 *   true when the program returns non-zero (libpcap: the snap length).
 */
static inline bool
pppoe_filter_match(const struct pppoe_filter *f, struct rte_mbuf *m)
{
	if (f == NULL)
		return true;
	if (f->jit != NULL)
		return f->jit(m) != 0;
	return rte_bpf_exec(f->bpf, m) != 0;
}

/**
 * pppoe_filter_match() with DPDK's interpreter whether or not there is
 * native code (tests, benchmarks). NULL matches every frame.
 */
bool pppoe_filter_match_interp(const struct pppoe_filter *f, struct rte_mbuf *m);

/** Is the filter run as native code (DPDK's eBPF JIT)? */
static inline bool
pppoe_filter_jit(const struct pppoe_filter *f)
{
	return f->jit != NULL;
}

#endif /* PPPOE_FILTER_H */
