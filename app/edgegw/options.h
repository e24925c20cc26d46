/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Application options (the part of the command line after "--").
 * The parser needs no EAL, so the unit tests drive it directly.
 */
#ifndef EGW_OPTIONS_H
#define EGW_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EGW_DEF_BURST 32
#define EGW_DEF_MBUFS 16384
#define EGW_DEF_RXD 1024
#define EGW_DEF_TXD 1024

struct egw_opts {
	bool interactive;
	bool auto_start;
	const char *cmdline_file;
	unsigned int stats_period; /**< seconds, 0 = off */
	bool idle_exit_set;
	uint64_t idle_exit_ms;
	const char *stats_json;
	uint16_t rxq; /**< 0 = one per worker, capped by the port */
	uint16_t txq; /**< 0 = one per worker */
	uint16_t burst;
	/** process each burst at once, also in an engine with a prefetch step
	 *  (egw_fwd_engine.prefetch: the gateway), instead of a poll later */
	bool no_rx_hold;
	uint32_t mbufs;
	uint16_t rxd;
	uint16_t txd;
	int control_lcore;           /**< -1 = main lcore */
	unsigned int pppoe_sessions; /**< PPPoE session table size; 0 = the maximum */
	uint32_t ip_routes;          /**< IPv4 FIB size in prefixes; 0 = lib/ip's default */
	uint32_t ip6_routes;         /**< IPv6 FIB size in prefixes; 0 = lib/ip's default */
	const char *forward_mode;
};

/** Fill @p o with the defaults. */
void egw_opts_default(struct egw_opts *o);

/**
 * Parse application options; argv[0] is the program name.
 *
 * @return 0 on success, 1 if help was asked (usage already printed to
 *   stdout), -EINVAL with a message in @p err naming the option and the
 *   problem.
 */
int egw_opts_parse(int argc, char **argv, struct egw_opts *o, char *err, size_t errlen);

/** Print the usage text to stdout. */
void egw_opts_usage(const char *prog);

/**
 * Strict unsigned decimal: no sign, no junk, no overflow, in [min, max].
 * @return 0 or -EINVAL / -ERANGE.
 */
int egw_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/**
 * Strict unsigned decimal, or hexadecimal after 0x: no sign, no junk, no
 * overflow, in [min, max].
 * @return 0 or -EINVAL / -ERANGE.
 */
int egw_parse_num(const char *s, uint64_t min, uint64_t max, uint64_t *out);

#endif /* EGW_OPTIONS_H */
