/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Control side of edgegw's XDP steering program (egw_xdp.bpf.c) on ports
 * shared with the kernel through net_af_xdp.
 *
 * net_af_xdp loads the program (its xdp_prog= devarg) and inserts its
 * AF_XDP sockets into xsks_map. After the port has started, egw_xdp_port_open()
 * finds the program attached to the interface, opens its maps with libbpf,
 * pins them under /sys/fs/bpf/edgegw/<interface>/ (so `bpftool map dump
 * pinned ...` reads them) and from then on the other calls keep them in
 * step with edgegw's state: tunnel addresses (and ESP-in-UDP ports) of
 * inbound ESP SAs, edgegw's own addresses per VLAN, subscriber pools,
 * routes, rxtokens flows, the access role; and the kernel's own addresses,
 * which routes must not take, with the kernel's (rtnetlink events read by
 * egw_xdp_service()).
 * Address and flow entries carry a reference count, so two SAs with one
 * tunnel address need two deletions.
 *
 * Threading: control path only (one thread at a time); the data path is
 * the kernel running the program, which only reads the maps.
 */
#ifndef EGW_XDP_H
#define EGW_XDP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "egw_xdp_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Root of the pinned maps; one folder per interface below it. */
#define EGW_XDP_PIN_ROOT "/sys/fs/bpf/edgegw"

/** Most ports with a steering program. */
#define EGW_XDP_MAX_PORTS 32

/**
 * Check that a program file loads and verifies on this kernel, before a
 * PMD loads it: the kernel's verifier log is printed (libbpf, stderr) when
 * it refuses it.
 * @param path  the BPF object (egw_xdp.bpf.o)
 * @param err   message on failure (names the file and the problem)
 * @return 0, or -ENOENT (no file), -EPERM (the kernel refuses bpf(): not
 *   root or no CAP_BPF), -ENOSYS (no BPF in the kernel), -EINVAL (not
 *   edgegw's program: a map is missing), or the load error (verifier:
 *   -EACCES, -EINVAL).
 */
int egw_xdp_verify(const char *path, char *err, size_t errlen);

/**
 * Take over the steering program attached to an interface.
 * @param port     edgegw's port id (index for the other calls)
 * @param ifindex  the interface net_af_xdp runs on
 * @param access   the port is an access port (PPPoE is edgegw's)
 * @param err      message on failure
 * @return 0; -ENOENT if no program is attached or it is not edgegw's (the
 *   default net_af_xdp program: every frame goes to edgegw); -EEXIST if the
 *   port is open; -EINVAL (port out of range); -EPERM; other negative errno.
 */
int egw_xdp_port_open(uint16_t port, unsigned int ifindex, bool access, char *err, size_t errlen);

/**
 * Release a port: unpin its maps and close them. No-op if not open.
 */
void egw_xdp_port_close(uint16_t port);

/** @return whether a port has edgegw's steering program. */
bool egw_xdp_port_active(uint16_t port);

/** @return whether a port's program runs in generic (SKB) mode: the
 *  interface has no native XDP. */
bool egw_xdp_port_generic(uint16_t port);

/** @return whether any port has edgegw's steering program. */
bool egw_xdp_any_active(void);

/**
 * Set a port's role: on an access port PPPoE goes to edgegw.
 * @return 0, -ENODEV (port not open), or the map update's error.
 */
int egw_xdp_set_access(uint16_t port, bool access);

/**
 * Add or delete (reference counted) a tunnel address (ESP and ESP in UDP
 * to port 4500) on every open port.
 * @param kind    EGW_XDP_ADDR_ESP
 * @param family  AF_INET or AF_INET6
 * @param a       the address, network order (4 or 16 bytes)
 * @return 0 (also when no port is open), -EINVAL, -ENOENT (delete of an
 *   address not there), -E2BIG (a map is full: message names it), other
 *   errno from bpf(). On failure no port is changed.
 */
int egw_xdp_addr(int kind, int family, const uint8_t *a, bool add, char *err, size_t errlen);

/** Address kind of egw_xdp_addr(): a tunnel address. */
#define EGW_XDP_ADDR_ESP 0

/**
 * Add or delete (reference counted) an address of edgegw's on one port and
 * VLAN: all IP to it, and the ARP and ND for it, on that VLAN only.
 * @param port  edgegw's port (nothing to do if it has no steering program)
 * @param vlan  0 (untagged: frames without a tag) or 1..4094 (frames with
 *              exactly that one tag; under two tags no address matches)
 * @return as egw_xdp_addr(); -EINVAL also for a VLAN above 4094.
 */
int egw_xdp_own(uint16_t port, uint16_t vlan, int family, const uint8_t *a, bool add, char *err,
		size_t errlen);

/**
 * Add or delete (reference counted) a subscriber pool prefix.
 * @return as egw_xdp_addr(); -EINVAL also for a prefix length out of range.
 */
int egw_xdp_pool(int family, const uint8_t *a, uint8_t len, bool add, char *err, size_t errlen);
/** Control path: whether a pool in the steering maps holds address a (4 or
 *  16 bytes by family); false with no port open. */
bool egw_xdp_pool_holds(int family, const uint8_t *a);

/**
 * Add or delete (reference counted) a route's prefix on every open port:
 * unicast IP to it is edgegw's, except to the kernel's own addresses
 * (egw_kern4/6) and to multicast, link-local, loopback and broadcast
 * addresses, which stay the kernel's whatever the prefix.
 * @return as egw_xdp_pool().
 */
int egw_xdp_route(int family, const uint8_t *a, uint8_t len, bool add, char *err, size_t errlen);

/**
 * Add or delete (reference counted) an ESP-in-UDP port other than 4500 on
 * a tunnel address (an inbound SA's natt dport): UDP to it is ESP unless
 * IKE or a keepalive, as on 4500. The address must be a tunnel address
 * (egw_xdp_addr()) to be steered.
 * @param port  host order, 1..65535
 * @return as egw_xdp_addr().
 */
int egw_xdp_natt(int family, const uint8_t *a, uint16_t port, bool add, char *err, size_t errlen);

/**
 * Start (begin) or end a batch of changes: egw_filter is rebuilt once at
 * the end instead of after every change (ip route load of many routes);
 * until then the new entries' frames still reach the kernel.
 * @return 0, or the error of rebuilding the pre-check at the end.
 */
int egw_xdp_batch(bool begin);

/**
 * Control-path service: reads the kernel's address events and, on any,
 * the kernel's addresses again into egw_kern4/6 of every port.
 * @return the number of resyncs (0 when nothing happened).
 */
int egw_xdp_service(void);

/**
 * Add or delete (reference counted) an rxtokens flow.
 * @param k  the key (unused bytes zero)
 * @return as egw_xdp_addr().
 */
int egw_xdp_flow(const struct egw_xdp_flow_key *k, bool add, char *err, size_t errlen);

/**
 * Per-class counters of a port, summed over CPUs.
 * @return 0, -ENODEV (port not open), or errno from bpf().
 */
int egw_xdp_counters(uint16_t port, struct egw_xdp_counter out[EGW_XDP_CLS_MAX]);

/** @return the name of a class ("kernel", "pppoe_disc", ...), or "?". */
const char *egw_xdp_class_name(unsigned int cls);

/** Most maps egw_xdp_port_info() reports. */
#define EGW_XDP_INFO_MAPS 16

/** A port's state, as `show xdp`, --stats-json and telemetry give it. */
struct egw_xdp_port_info {
	char ifname[16];
	unsigned int ifindex;
	uint32_t prog_id;
	const char *mode;        /**< "native", "generic" or "other" */
	uint32_t flags;          /**< egw_cfg flags (EGW_XDP_F_*) as lib/xdp keeps them */
	bool kernel_addrs_known; /**< false: routes are not steered */
	struct egw_xdp_counter cls[EGW_XDP_CLS_MAX];
	unsigned int n_maps;
	struct {
		const char *name;
		uint32_t entries; /**< distinct keys */
		uint32_t max;
	} maps[EGW_XDP_INFO_MAPS];
};

/**
 * The state of a port.
 * @return 0, -ENODEV (port not open), or errno from bpf().
 */
int egw_xdp_port_info(uint16_t port, struct egw_xdp_port_info *out);

/** Print the state of every open port: program id and mode, maps with
 *  their entries and pin paths, per-class counters. */
void egw_xdp_show(FILE *f);

/** Write the ports' counters as a JSON array. */
void egw_xdp_json(FILE *f);

#ifdef __cplusplus
}
#endif

#endif /* EGW_XDP_H */
