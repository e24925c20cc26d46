/* SPDX-License-Identifier: BSD-3-Clause */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

int
egw_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (s == NULL || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end != '\0')
		return -EINVAL;
	if (errno == ERANGE || v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int
egw_parse_num(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	size_t i;
	char *end;

	if (s == NULL || s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
		return egw_parse_u64(s, min, max, out);
	if (s[2] == '\0')
		return -EINVAL;
	for (i = 2; s[i] != '\0'; i++)
		if (!isxdigit((unsigned char)s[i]))
			return -EINVAL;
	errno = 0;
	v = strtoull(s + 2, &end, 16);
	if (*end != '\0')
		return -EINVAL;
	if (errno == ERANGE || v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

void
egw_opts_default(struct egw_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->burst = EGW_DEF_BURST;
	o->mbufs = EGW_DEF_MBUFS;
	o->rxd = EGW_DEF_RXD;
	o->txd = EGW_DEF_TXD;
	o->control_lcore = -1;
}

void
egw_opts_usage(const char *prog)
{
	printf("Usage: %s [EAL options] -- [options]\n"
	       "\n"
	       "  -i, --interactive         run the command line on the terminal\n"
	       "  -a, --auto-start          start forwarding at once (implied without -i)\n"
	       "      --cmdline-file FILE   run the commands in FILE first; stop at the\n"
	       "                            first bad line with a non-zero exit\n"
	       "      --forward-mode MODE   initial engine: io, mac, rxonly, gateway (default io)\n"
	       "      --stats-period SEC    print port stats every SEC seconds\n"
	       "      --idle-exit MS        quit once no port has received a frame for MS\n"
	       "                            milliseconds (from the last frame, or from start)\n"
	       "      --stats-json FILE     write every counter as JSON to FILE at exit\n"
	       "      --rxq N               RX queues per port (default: one per worker,\n"
	       "                            capped by the port)\n"
	       "      --txq N               TX queues per port (default and minimum: one per\n"
	       "                            worker)\n"
	       "      --burst N             RX burst size, 1..128 (default %u)\n"
	       "      --no-rx-hold          gateway: route each burst at once, not at its\n"
	       "                            queue's next poll (less latency; with a large\n"
	       "                            routing table, less throughput)\n"
	       "      --mbufs N             mbufs per NUMA socket (default %u)\n"
	       "      --rxd N, --txd N      RX/TX descriptors per queue (default %u/%u)\n"
	       "      --control-lcore ID    run the control path on lcore ID instead of the\n"
	       "                            main lcore\n"
	       "      --pppoe-sessions N    PPPoE session table size, 1..65534 (default: the\n"
	       "                            maximum)\n"
	       "      --ip-routes N         IPv4 routing table size in prefixes, 16..16777216\n"
	       "                            (default 65536; a full Internet table: 1100000)\n"
	       "      --ip6-routes N        IPv6 routing table size in prefixes, 16..4194304\n"
	       "                            (default 16384; a full table: 250000)\n"
	       "  -h, --help                this text\n",
	       prog, EGW_DEF_BURST, EGW_DEF_MBUFS, EGW_DEF_RXD, EGW_DEF_TXD);
}

enum {
	OPT_CMDLINE_FILE = 256,
	OPT_STATS_PERIOD,
	OPT_IDLE_EXIT,
	OPT_STATS_JSON,
	OPT_RXQ,
	OPT_TXQ,
	OPT_BURST,
	OPT_MBUFS,
	OPT_RXD,
	OPT_TXD,
	OPT_CONTROL_LCORE,
	OPT_FORWARD_MODE,
	OPT_PPPOE_SESSIONS,
	OPT_IP_ROUTES,
	OPT_IP6_ROUTES,
	OPT_NO_RX_HOLD,
};

static const struct option long_opts[] = {
	{"interactive", no_argument, NULL, 'i'},
	{"auto-start", no_argument, NULL, 'a'},
	{"help", no_argument, NULL, 'h'},
	{"cmdline-file", required_argument, NULL, OPT_CMDLINE_FILE},
	{"stats-period", required_argument, NULL, OPT_STATS_PERIOD},
	{"idle-exit", required_argument, NULL, OPT_IDLE_EXIT},
	{"stats-json", required_argument, NULL, OPT_STATS_JSON},
	{"rxq", required_argument, NULL, OPT_RXQ},
	{"txq", required_argument, NULL, OPT_TXQ},
	{"burst", required_argument, NULL, OPT_BURST},
	{"mbufs", required_argument, NULL, OPT_MBUFS},
	{"rxd", required_argument, NULL, OPT_RXD},
	{"txd", required_argument, NULL, OPT_TXD},
	{"control-lcore", required_argument, NULL, OPT_CONTROL_LCORE},
	{"forward-mode", required_argument, NULL, OPT_FORWARD_MODE},
	{"pppoe-sessions", required_argument, NULL, OPT_PPPOE_SESSIONS},
	{"ip-routes", required_argument, NULL, OPT_IP_ROUTES},
	{"ip6-routes", required_argument, NULL, OPT_IP6_ROUTES},
	{"no-rx-hold", no_argument, NULL, OPT_NO_RX_HOLD},
	{NULL, 0, NULL, 0},
};

/* Whether the long option getopt_long() returns as val takes no value. */
static bool
no_arg_opt(int val)
{
	const struct option *l;

	for (l = long_opts; l->name != NULL; l++)
		if (l->val == val)
			return l->has_arg == no_argument;
	return false;
}

/* Numeric options: where each one's value goes and its bounds. */
struct num_opt {
	int id;
	const char *name;
	uint64_t min;
	uint64_t max;
};

static const struct num_opt num_opts[] = {
	{OPT_STATS_PERIOD, "stats-period", 1, 86400},
	{OPT_IDLE_EXIT, "idle-exit", 1, 86400000},
	{OPT_RXQ, "rxq", 1, 16},
	{OPT_TXQ, "txq", 1, 128},
	{OPT_BURST, "burst", 1, 128},
	{OPT_MBUFS, "mbufs", 1024, 16777216},
	{OPT_RXD, "rxd", 32, 32768},
	{OPT_TXD, "txd", 32, 32768},
	{OPT_CONTROL_LCORE, "control-lcore", 0, 1023},
	{OPT_PPPOE_SESSIONS, "pppoe-sessions", 1, 65534},
	{OPT_IP_ROUTES, "ip-routes", 16, 16777216},
	{OPT_IP6_ROUTES, "ip6-routes", 16, 4194304},
};

static int
num_opt_set(struct egw_opts *o, int id, uint64_t v)
{
	switch (id) {
	case OPT_STATS_PERIOD: o->stats_period = (unsigned int)v; break;
	case OPT_IDLE_EXIT:
		o->idle_exit_ms = v;
		o->idle_exit_set = true;
		break;
	case OPT_RXQ: o->rxq = (uint16_t)v; break;
	case OPT_TXQ: o->txq = (uint16_t)v; break;
	case OPT_BURST: o->burst = (uint16_t)v; break;
	case OPT_MBUFS: o->mbufs = (uint32_t)v; break;
	case OPT_RXD: o->rxd = (uint16_t)v; break;
	case OPT_TXD: o->txd = (uint16_t)v; break;
	case OPT_CONTROL_LCORE: o->control_lcore = (int)v; break;
	case OPT_PPPOE_SESSIONS: o->pppoe_sessions = (unsigned int)v; break;
	case OPT_IP_ROUTES: o->ip_routes = (uint32_t)v; break;
	case OPT_IP6_ROUTES: o->ip6_routes = (uint32_t)v; break;
	default: return -EINVAL;
	}
	return 0;
}

int
egw_opts_parse(int argc, char **argv, struct egw_opts *o, char *err, size_t errlen)
{
	int c;
	size_t i;

	egw_opts_default(o);
	optind = 0; /* glibc: full re-initialisation, so the parser can run twice */
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":iah", long_opts, NULL)) != -1) {
		switch (c) {
		case 'i': o->interactive = true; continue;
		case 'a': o->auto_start = true; continue;
		case 'h': egw_opts_usage(argv[0]); return 1;
		case OPT_CMDLINE_FILE: o->cmdline_file = optarg; continue;
		case OPT_STATS_JSON: o->stats_json = optarg; continue;
		case OPT_NO_RX_HOLD: o->no_rx_hold = true; continue;
		case OPT_FORWARD_MODE: o->forward_mode = optarg; continue;
		case ':':
			snprintf(err, errlen, "option '%s' needs a value", argv[optind - 1]);
			return -EINVAL;
		case '?':
			/* a long option that takes no value, given one (--a=b) */
			if (optopt != 0 && no_arg_opt(optopt) &&
			    strncmp(argv[optind - 1], "--", 2) == 0) {
				snprintf(err, errlen, "option '%.*s' takes no value",
					 (int)strcspn(argv[optind - 1], "="), argv[optind - 1]);
				return -EINVAL;
			}
			if (optopt != 0)
				snprintf(err, errlen, "unknown option '-%c' (see --help)", optopt);
			else
				snprintf(err, errlen, "unknown option '%s' (see --help)",
					 argv[optind - 1]);
			return -EINVAL;
		default: break;
		}
		for (i = 0; i < sizeof(num_opts) / sizeof(num_opts[0]); i++) {
			const struct num_opt *n = &num_opts[i];
			uint64_t v;
			int rc;

			if (n->id != c)
				continue;
			rc = egw_parse_u64(optarg, n->min, n->max, &v);
			if (rc == -EINVAL) {
				snprintf(err, errlen, "--%s: '%s' is not a number", n->name,
					 optarg);
				return -EINVAL;
			}
			if (rc < 0) {
				snprintf(err, errlen,
					 "--%s: %s is out of range %" PRIu64 "..%" PRIu64, n->name,
					 optarg, n->min, n->max);
				return -EINVAL;
			}
			num_opt_set(o, c, v);
			break;
		}
	}
	if (optind < argc) {
		snprintf(err, errlen, "unexpected argument '%s' (see --help)", argv[optind]);
		return -EINVAL;
	}
	if (o->cmdline_file != NULL && o->cmdline_file[0] == '\0') {
		snprintf(err, errlen, "--cmdline-file: empty file name");
		return -EINVAL;
	}
	if (o->stats_json != NULL && o->stats_json[0] == '\0') {
		snprintf(err, errlen, "--stats-json: empty file name");
		return -EINVAL;
	}
	return 0;
}
