/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The command language (rte_cmdline), shared by the interactive prompt and
 * command files. Every command validates all its arguments before it
 * changes anything; a failing command reports "error: ..." (prefixed with
 * file:line in a command file) and leaves the state as it was.
 */
/* cmdline_get_rdline() (history of the interactive prompt) is experimental
 * in DPDK 22.11 */
#define ALLOW_EXPERIMENTAL_API
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmdline.h>
#include <cmdline_parse.h>
#include <cmdline_parse_string.h>
#include <cmdline_rdline.h>
#include <cmdline_socket.h>

#include "cli.h"
#include "fwd.h"

/* Longest command line, as the interactive line editor allows (its
 * RDLINE_BUF_SIZE is 512 and private). */
#define CLI_LINE_MAX 511

static int cli_rc;              /* status of the command being run */
static char cli_where[300];     /* "file:line: " while running a file */
static struct cmdline *cl_term; /* interactive prompt */
static struct cmdline *cl_file; /* command files and egw_cli_run_line() */
static bool cli_secret;         /* the line run carried key material */

void
egw_cli_secret(void)
{
	cli_secret = true;
}

/* After a line that carried a key: overwrite the stack below the caller,
 * where rte_cmdline parsed it (two result buffers of
 * CMDLINE_PARSE_RESULT_BUFSIZE on its stack, which it does not wipe). */
static __rte_noinline void
scrub_stack(void)
{
	char b[4 * CMDLINE_PARSE_RESULT_BUFSIZE];

	explicit_bzero(b, sizeof(b));
}

void
egw_cli_fail(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%serror: ", cli_where);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (cli_rc == 0)
		cli_rc = -EINVAL;
}

/* ---- help ---------------------------------------------------------------- */

const struct egw_cli_help egw_cli_help_table[] = {
	{"general", "help [<topic>]",
	 "list commands; topics: general, forwarding, ports, config, ip, rxtokens, esp, pppoe, "
	 "radius, all"},
	{"ip", "ip address add|del <addr>/<len> port <N> [vlan <id>]",
	 "an address of edgegw: connected and local routes, gratuitous ARP / unsolicited NA"},
	{"ip", "ip route add|del <prefix> via <addr> [port <N>] [via <addr> [port <N>]]...",
	 "a route through gateways; several via: equal-cost multipath (5-tuple hash)"},
	{"ip", "ip route add|del <prefix> dev <N> | blackhole | unreachable",
	 "on-link on port N (destinations resolved by ARP/ND), discard, or discard with ICMP"},
	{"ip", "ip route load <file>",
	 "add routes from a file, one 'ip route add' argument list per line (big tables)"},
	{"ip", "ip neigh add <addr> <mac> port <N> [vlan <id>]", "a static (permanent) neighbour"},
	{"ip", "ip neigh del <addr> port <N> [vlan <id>]",
	 "forget a neighbour (routes through it resolve it again)"},
	{"ip", "ip exception add port <N> [name <ifname>]",
	 "a kernel interface (TUN, default egwx<N>) with the port's addresses: what the workers "
	 "do not answer reaches the host's stack (SSH, BGP), what it sends is routed"},
	{"ip", "ip exception del port <N>", "remove the port's kernel exception path"},
	{"ip", "ip port <N> mtu <bytes>|default",
	 "the IP MTU routing uses on a port, 1280..the port's: larger packets are fragmented "
	 "or answered with ICMP too-big"},
	{"ip", "ip icmp ratelimit <pps> <burst>",
	 "ICMP errors per worker: a token bucket (default 1000/s, burst 50)"},
	{"ip", "show ip address",
	 "edgegw's addresses per port (with the IPv6 link-local ones), the exception paths"},
	{"ip", "show ip route [<prefix>|<addr>|summary]",
	 "routes, the route an address takes, or counts and FIB memory"},
	{"ip", "show ip neigh", "neighbours: address, port, MAC, state, packets waiting"},
	{"ip", "show ip stats", "IP data-path counters, drops by reason, ARP/ND counters"},
	{"general", "start", "start forwarding with the selected engine"},
	{"general", "stop", "stop forwarding: workers finish their burst and sleep"},
	{"general", "quit", "stop forwarding, print the final statistics and exit"},
	{"forwarding", "set fwd io|mac|rxonly|gateway",
	 "select the forwarding engine (forwarding must be stopped); gateway routes IP"},
	{"forwarding", "set fwd gateway xconnect",
	 "gateway without routing: IP crosses unrouted between the access and uplink roles "
	 "(tests, port pairs; no TTL, no ARP)"},
	{"forwarding", "set fwd replay <pcap> [<pps>] [port <N>]",
	 "transmit the frames of a capture in a loop, at full speed or <pps> frames/s per port"},
	{"forwarding", "show fwd stats",
	 "per-port and per-queue fate of received frames: tx, delivered, queued, drops by reason"},
	{"ports", "show port stats all|<N>",
	 "NIC counters with Rx/Tx pps and bps since the previous show"},
	{"ports", "show port xstats <N>", "the driver's extended counters"},
	{"ports", "clear port stats all|<N>",
	 "restart the counts shown by the show commands (JSON and telemetry keep totals)"},
	{"ports", "port role <N> access|uplink|lan|none",
	 "set the role of a port for the gateway engine (forwarding must be stopped)"},
	{"config", "show config", "engine, options, ports, lcores and their queues"},
	{"ports", "show xdp",
	 "net_af_xdp ports with edgegw's XDP program: id, mode, maps, frames per class"},
	{"rxtokens", "rxtokens region add <name> size <bytes>[K|M|G] [pagesize 2M|1G]",
	 "create a hugepage region for zero-copy delivery, cut into 4 KiB pages (tokens)"},
	{"rxtokens", "rxtokens region del <name>",
	 "delete a region with no binding and no consumer"},
	{"rxtokens", "rxtokens bind <region> port <N> queue <list> [shared]",
	 "RX queues (0,1 or 0-3 or all) receive into the region, steered by rte_flow to get "
	 "consumer flows only (refused where the port cannot); shared: the port carries only "
	 "the region owner's traffic, who may read every frame of these queues (forwarding "
	 "must be stopped)"},
	{"rxtokens", "rxtokens unbind <region> port <N> queue <list>",
	 "RX queues receive into the port's own pool again (forwarding must be stopped)"},
	{"rxtokens",
	 "rxtokens consumer add <name> region <r> match udp-dport <p> | dst <addr> | pppoe-session "
	 "<id> [quota <N>] [uid <U>] [gid <G>|any] [dump <file>]",
	 "deliver a flow's payloads; external (a process of uid/gid, default edgegw's, attaches) "
	 "unless dump; quotas must fit the region"},
	{"rxtokens", "rxtokens consumer del <name>",
	 "remove a consumer; every token it holds is released"},
	{"rxtokens", "rxtokens listen <unix-socket-path>",
	 "accept external consumers on this socket"},
	{"rxtokens", "rxtokens wait <consumer> [<seconds>]",
	 "wait (default 10 s) until a process attaches to the consumer"},
	{"rxtokens", "show rxtokens [regions|bindings|consumers]",
	 "regions (pool use, bookkeeping), bindings, consumers (tokens out, returns, rejects)"},
	{"esp", "esp state-file <path> [create]",
	 "file where outbound sequence numbers are persisted per key ahead of use (needed "
	 "before outbound SAs); 'create' makes a new one, a missing file is refused"},
	{"esp", "esp state-prune",
	 "forget the state file's keys no SA uses (only if none of them is ever used again)"},
	{"esp",
	 "esp sa add <spi> out|in aead aes-128-gcm|aes-256-gcm|chacha20-poly1305 key <hex> mode "
	 "transport|tunnel [src <addr> dst <addr>] [esn on|off] [window <n>] [natt [sport <port>] "
	 "[dport <port>]] [mtu <n>] [ttl <n>] [seq <n>] [lifetime packets <soft> <hard>] "
	 "[lifetime bytes <soft> <hard>]",
	 "add a security association; key is key + 4-byte salt in hex"},
	{"esp", "esp sa del <spi> [in|out]",
	 "delete an SA (the direction is needed only when both exist)"},
	{"esp", "esp sa replace out|in <old-spi> <new-spi>",
	 "rekey: the policies protecting with the old SA protect with the new one, in one step "
	 "(inbound: both accepted until the old one is deleted)"},
	{"esp",
	 "esp policy add out|in [pos <n>] src <prefix> dst <prefix> [proto "
	 "tcp|udp|icmp|icmp6|<0-254>|any] protect <spi>|bypass|discard",
	 "add a security policy rule (first match wins) at position n (default: last)"},
	{"esp", "esp policy del out|in <id>", "delete a policy rule by its id"},
	{"esp", "esp policy default out|in bypass|discard|auto",
	 "what a packet matching no rule gets (auto, the default: discard once the direction "
	 "has a rule)"},
	{"esp", "show esp sa [detail]",
	 "SAs: SPI, direction, mode, AEAD, endpoints, packets, bytes, drops (never the key)"},
	{"esp", "show esp policy",
	 "each direction's default and its policy rules in order, with id and hits"},
	{"esp", "show esp stats", "ESP totals of the workers and drops by reason"},
	{"pppoe", "pppoe ac-name <name>", "AC-Name of this access concentrator (default edgegw)"},
	{"pppoe", "pppoe service-name add|del <name>",
	 "Service-Names served; with none configured, any name is served"},
	{"pppoe", "pppoe pool add|del <prefix>",
	 "subscriber addresses: IPv4 a.b.c.d/8..30, or an IPv6 prefix/32..63 cut into /64s"},
	{"pppoe", "pppoe dns <primary> [<secondary>]", "DNS servers offered in IPCP (RFC 1877)"},
	{"pppoe", "pppoe dns none", "offer no DNS server"},
	{"pppoe", "pppoe limit sessions|per-mac <n>",
	 "most sessions in total, or per client MAC address (default 2)"},
	{"pppoe", "pppoe limit starting <n>",
	 "most sessions negotiating at once, discovery to first NCP (default 256)"},
	{"pppoe", "pppoe limit padi|padr <per-s> <per-s-per-mac>",
	 "PADIs/PADRs answered per second, all clients and per MAC (default 2000 3)"},
	{"pppoe", "pppoe limit auth-hold <s>",
	 "after failed logins a MAC is held 1 s, doubling up to this (default 60)"},
	{"pppoe", "pppoe mru <n>", "MRU asked for in LCP, 576..9000 (default 1492)"},
	{"pppoe", "pppoe mss-clamp auto|off|<value>",
	 "TCP MSS clamping of SYNs: session MRU - 40/60 (default), off, or a value"},
	{"pppoe", "pppoe keepalive <interval-s> <misses>",
	 "LCP echo every interval (0 = off); close after misses unanswered"},
	{"pppoe", "pppoe filter pass|active [user <name>|set <name>] <expr>|none",
	 "pcap-filter(7) on each IP frame of a bound session: pass (others dropped), active "
	 "(idle timer); default, per user, or a named set (local users, RADIUS Filter-Id)"},
	{"pppoe", "pppoe idle-timeout <s>", "close sessions idle this long, 0 = off (default off)"},
	{"pppoe", "pppoe session clear <id>|all", "close sessions: PADT and LCP Terminate"},
	{"pppoe", "ppp auth pap|chap|none [local|radius|radius local]",
	 "authentication asked for in LCP (default pap), checked against the local table "
	 "(default), RADIUS, or RADIUS then the table when no server answers"},
	{"pppoe", "ppp user add <name> <secret> [address <A>] [filter <set>]",
	 "add a subscriber, optionally with a static IPv4 address and a named filter set"},
	{"pppoe", "ppp user del <name>", "remove a subscriber (its sessions stay up)"},
	{"pppoe", "show pppoe sessions [detail]",
	 "one line per session: id, port, VLANs, MAC, state, user, addresses, uptime"},
	{"pppoe", "show pppoe stats",
	 "control counters, data-path drops by reason, sessions by state"},
	{"pppoe", "show pppoe filters",
	 "pass and active filters (default, per user, named sets) and the idle timeout"},
	{"radius",
	 "radius server add <addr>[:<port>] secret <s> [acct-port <p>] [priority <n>] "
	 "[timeout <ms>] [retries <n>]",
	 "a RADIUS server (ports 1812/1813; lower priority first; default timeout 3000 ms, 3 "
	 "retries); the secret is never shown"},
	{"radius", "radius server del <addr>[:<port>]", "remove a server (its requests move on)"},
	{"radius", "radius nas-identifier <s>", "NAS-Identifier sent (default edgegw)"},
	{"radius", "radius nas-ip <addr>", "NAS-IP-Address or NAS-IPv6-Address sent"},
	{"radius", "radius interim <s>",
	 "Interim-Update interval unless the server sends Acct-Interim-Interval (0 = off)"},
	{"radius", "radius dead-time <s>",
	 "how long a server that stopped answering is passed over (default 30)"},
	{"radius", "radius max-outstanding <n>",
	 "requests in flight at most (default 1024; more are refused, counted)"},
	{"radius", "radius dae listen <addr>[:<port>] client <addr> secret <s>",
	 "RFC 5176 Disconnect/CoA listener (port 3799) and a client allowed to use it"},
	{"radius", "show radius [servers|stats]",
	 "configuration, servers (state, counts), or every RADIUS counter"},
	{NULL, NULL, NULL},
};

static const char *const help_topics[] = {"general",  "forwarding", "ports", "config", "ip",
					  "rxtokens", "esp",        "pppoe", "radius", NULL};

static void
help_print(const char *topic)
{
	const struct egw_cli_help *h;

	for (h = egw_cli_help_table; h->topic != NULL; h++) {
		if (topic != NULL && strcmp(h->topic, topic) != 0)
			continue;
		/* a syntax that does not fit the column stands on its own line */
		if (strlen(h->syntax) < 42)
			printf("  %-42s %s\n", h->syntax, h->text);
		else
			printf("  %s\n  %-42s %s\n", h->syntax, "", h->text);
	}
}

struct cmd_res {
	cmdline_fixed_string_t w[5];
	cmdline_multi_string_t rest;
};

#define TOK(i, s) TOKEN_STRING_INITIALIZER(struct cmd_res, w[i], s)

static cmdline_parse_token_string_t t_help = TOK(0, "help");
static cmdline_parse_token_string_t t_start = TOK(0, "start");
static cmdline_parse_token_string_t t_stop = TOK(0, "stop");
static cmdline_parse_token_string_t t_quit = TOK(0, "quit");
static cmdline_parse_token_string_t t_show = TOK(0, "show");
static cmdline_parse_token_string_t t_clear = TOK(0, "clear");
static cmdline_parse_token_string_t t_set = TOK(0, "set");
static cmdline_parse_token_string_t t_port0 = TOK(0, "port");
static cmdline_parse_token_string_t t_port1 = TOK(1, "port");
static cmdline_parse_token_string_t t_fwd1 = TOK(1, "fwd");
static cmdline_parse_token_string_t t_config1 = TOK(1, "config");
static cmdline_parse_token_string_t t_role1 = TOK(1, "role");
static cmdline_parse_token_string_t t_stats2 = TOK(2, "stats");
static cmdline_parse_token_string_t t_xstats2 = TOK(2, "xstats");
static cmdline_parse_token_string_t t_any1 = TOK(1, NULL);
static cmdline_parse_token_string_t t_any2 = TOK(2, NULL);
static cmdline_parse_token_string_t t_any3 = TOK(3, NULL);
static cmdline_parse_token_string_t t_rest =
	TOKEN_STRING_INITIALIZER(struct cmd_res, rest, TOKEN_STRING_MULTI);

static void
cmd_help(void *pr, struct cmdline *cl __rte_unused, void *data __rte_unused)
{
	struct cmd_res *r = pr;
	const char *topic = data != NULL ? r->w[1] : NULL;
	unsigned int i;

	if (topic == NULL) {
		printf("Commands (help <topic> for one group; topics: general, forwarding, ports, "
		       "config, ip, rxtokens, esp, pppoe, all):\n");
		help_print(NULL);
		return;
	}
	if (strcmp(topic, "all") == 0) {
		help_print(NULL);
		return;
	}
	for (i = 0; help_topics[i] != NULL; i++) {
		if (strcmp(help_topics[i], topic) == 0) {
			help_print(topic);
			return;
		}
	}
	egw_cli_fail("help: unknown topic '%s' (topics: general, forwarding, ports, config, "
		     "ip, rxtokens, esp, pppoe, all)",
		     topic);
}

static void
cmd_start(void *pr __rte_unused, struct cmdline *cl __rte_unused, void *data __rte_unused)
{
	char err[256];

	if (egw_fwd_start(err, sizeof(err)) < 0)
		egw_cli_fail("start: %s", err);
	else
		printf("Forwarding started (engine %s)\n", egw.engine->name);
}

static void
cmd_stop(void *pr __rte_unused, struct cmdline *cl __rte_unused, void *data __rte_unused)
{
	if (egw_fwd_stop() < 0) {
		egw_cli_fail("stop: forwarding is not running");
		return;
	}
	printf("Forwarding stopped\n");
	egw_show_fwd_stats(stdout);
}

static void
cmd_quit(void *pr __rte_unused, struct cmdline *cl, void *data __rte_unused)
{
	__atomic_store_n(&egw.quit, 1, __ATOMIC_RELAXED);
	if (cl == cl_term)
		cmdline_quit(cl);
}

/* "all" or a port number; -1 for all */
static int
port_or_all(const char *cmd, const char *s, int *port)
{
	char err[128];
	uint16_t p;

	if (strcmp(s, "all") == 0) {
		*port = -1;
		return 0;
	}
	if (egw_port_parse(s, &p, err, sizeof(err)) < 0) {
		egw_cli_fail("%s: %s", cmd, err);
		return -EINVAL;
	}
	*port = p;
	return 0;
}

static void
cmd_show_port(void *pr, struct cmdline *cl __rte_unused, void *data __rte_unused)
{
	struct cmd_res *r = pr;
	uint16_t pid;
	int port;

	if (strcmp(r->w[2], "xstats") == 0) {
		char err[128];
		uint16_t p;

		if (egw_port_parse(r->w[3], &p, err, sizeof(err)) < 0) {
			egw_cli_fail("show port xstats: %s", err);
			return;
		}
		egw_show_port_xstats(stdout, p);
		return;
	}
	if (port_or_all("show port stats", r->w[3], &port) < 0)
		return;
	RTE_ETH_FOREACH_DEV (pid)
		if (port < 0 || port == pid)
			egw_show_port_stats(stdout, pid);
}

static void
cmd_clear_port(void *pr, struct cmdline *cl __rte_unused, void *data __rte_unused)
{
	struct cmd_res *r = pr;
	uint16_t pid;
	int port;

	if (port_or_all("clear port stats", r->w[3], &port) < 0)
		return;
	RTE_ETH_FOREACH_DEV (pid) {
		if (port < 0 || port == pid) {
			egw_clear_port_stats(pid);
			printf("  NIC statistics for port %u cleared\n", pid);
		}
	}
}

static void
cmd_show_fwd(void *pr, struct cmdline *cl __rte_unused, void *data __rte_unused)
{
	struct cmd_res *r = pr;

	if (strcmp(r->w[2], "stats") != 0) {
		egw_cli_fail("show fwd: unknown '%s' (show fwd stats)", r->w[2]);
		return;
	}
	egw_show_fwd_stats(stdout);
}

static void
cmd_show_config(void *pr __rte_unused, struct cmdline *cl __rte_unused, void *data __rte_unused)
{
	egw_show_config(stdout);
}

static void
cmd_set_fwd(void *pr, struct cmdline *cl __rte_unused, void *data)
{
	struct cmd_res *r = pr;
	char spec[sizeof(r->w[2]) + sizeof(r->rest) + 2];
	char err[512];

	if (data != NULL)
		snprintf(spec, sizeof(spec), "%s %s", r->w[2], r->rest);
	else
		snprintf(spec, sizeof(spec), "%s", r->w[2]);
	if (egw_fwd_select(spec, err, sizeof(err)) < 0) {
		egw_cli_fail("set fwd: %s", err);
		return;
	}
	printf("Set %s packet forwarding mode\n", egw.engine->name);
}

static void
cmd_port_role(void *pr, struct cmdline *cl __rte_unused, void *data __rte_unused)
{
	struct cmd_res *r = pr;
	enum egw_port_role role;
	char err[128];
	uint16_t p;

	if (egw_port_parse(r->w[2], &p, err, sizeof(err)) < 0) {
		egw_cli_fail("port role: %s", err);
		return;
	}
	if (strcmp(r->w[3], "access") == 0) {
		role = EGW_ROLE_ACCESS;
	} else if (strcmp(r->w[3], "uplink") == 0) {
		role = EGW_ROLE_UPLINK;
	} else if (strcmp(r->w[3], "lan") == 0) {
		role = EGW_ROLE_LAN;
	} else if (strcmp(r->w[3], "none") == 0) {
		role = EGW_ROLE_NONE;
	} else {
		egw_cli_fail("port role: unknown role '%s' (access, uplink, lan or none)", r->w[3]);
		return;
	}
	if (__atomic_load_n(&egw.fwd_running, __ATOMIC_RELAXED)) {
		egw_cli_fail("port role: forwarding is running: stop it first");
		return;
	}
	/* the control path reads the roles (PPPoE frames of access ports
	 * only) under the lock */
	rte_spinlock_lock(&egw.ctrl_lock);
	if (egw_ip_stage_port_role(p, role, err, sizeof(err)) < 0) {
		rte_spinlock_unlock(&egw.ctrl_lock);
		egw_cli_fail("port role: %s", err);
		return;
	}
	if (egw_pppoe_stage_port_role(p, role, err, sizeof(err)) < 0) {
		char e2[128];

		egw_ip_stage_port_role(p, egw.ports[p].role, e2, sizeof(e2));
		rte_spinlock_unlock(&egw.ctrl_lock);
		egw_cli_fail("port role: %s", err);
		return;
	}
	egw.ports[p].role = role;
	egw_xdp_hook_role(p, role);
	rte_spinlock_unlock(&egw.ctrl_lock);
	printf("Port %u role %s\n", p, egw_role_name(role));
}

#define INST(name, fn, d, help, ...)           \
	static cmdline_parse_inst_t name = {   \
		.f = fn,                       \
		.data = d,                     \
		.help_str = help,              \
		.tokens = {__VA_ARGS__, NULL}, \
	}

INST(i_help, cmd_help, NULL, "help [<topic>]", (void *)&t_help);
INST(i_help_topic, cmd_help, (void *)1, "help <topic>", (void *)&t_help, (void *)&t_any1);
INST(i_start, cmd_start, NULL, "start: start forwarding", (void *)&t_start);
INST(i_stop, cmd_stop, NULL, "stop: stop forwarding", (void *)&t_stop);
INST(i_quit, cmd_quit, NULL, "quit: exit edgegw", (void *)&t_quit);
INST(i_show_port_stats, cmd_show_port, NULL, "show port stats all|<N>", (void *)&t_show,
     (void *)&t_port1, (void *)&t_stats2, (void *)&t_any3);
INST(i_show_port_xstats, cmd_show_port, NULL, "show port xstats <N>", (void *)&t_show,
     (void *)&t_port1, (void *)&t_xstats2, (void *)&t_any3);
INST(i_clear_port_stats, cmd_clear_port, NULL, "clear port stats all|<N>", (void *)&t_clear,
     (void *)&t_port1, (void *)&t_stats2, (void *)&t_any3);
INST(i_show_fwd, cmd_show_fwd, NULL, "show fwd stats", (void *)&t_show, (void *)&t_fwd1,
     (void *)&t_any2);
INST(i_show_config, cmd_show_config, NULL, "show config", (void *)&t_show, (void *)&t_config1);
INST(i_set_fwd, cmd_set_fwd, NULL, "set fwd <engine>", (void *)&t_set, (void *)&t_fwd1,
     (void *)&t_any2);
INST(i_set_fwd_args, cmd_set_fwd, (void *)1, "set fwd <engine> <args>", (void *)&t_set,
     (void *)&t_fwd1, (void *)&t_any2, (void *)&t_rest);
INST(i_port_role, cmd_port_role, NULL, "port role <N> access|uplink|lan|none", (void *)&t_port0,
     (void *)&t_role1, (void *)&t_any2, (void *)&t_any3);

extern cmdline_parse_inst_t egw_cli_rxtok;
extern cmdline_parse_inst_t egw_cli_show_rxtok;
extern cmdline_parse_inst_t egw_cli_show_rxtok_what;
extern cmdline_parse_inst_t egw_cli_esp;
extern cmdline_parse_inst_t egw_cli_show_xdp;
extern cmdline_parse_inst_t egw_cli_show_esp;
extern cmdline_parse_inst_t egw_cli_show_esp_what;
extern cmdline_parse_inst_t egw_cli_ip;
extern cmdline_parse_inst_t egw_cli_show_ip;
extern cmdline_parse_inst_t egw_cli_pppoe;
extern cmdline_parse_inst_t egw_cli_ppp;
extern cmdline_parse_inst_t egw_cli_show_pppoe;
extern cmdline_parse_inst_t egw_cli_show_pppoe_what;
extern cmdline_parse_inst_t egw_cli_radius;
extern cmdline_parse_inst_t egw_cli_show_radius;
extern cmdline_parse_inst_t egw_cli_show_radius_what;

static cmdline_parse_ctx_t cli_ctx[] = {
	&i_help,
	&i_help_topic,
	&i_start,
	&i_stop,
	&i_quit,
	&i_show_port_stats,
	&i_show_port_xstats,
	&i_clear_port_stats,
	&i_show_fwd,
	&i_show_config,
	&i_set_fwd,
	&i_set_fwd_args,
	&i_port_role,
	&egw_cli_rxtok,
	&egw_cli_show_rxtok,
	&egw_cli_show_rxtok_what,
	&egw_cli_esp,
	&egw_cli_show_xdp,
	&egw_cli_show_esp,
	&egw_cli_show_esp_what,
	&egw_cli_ip,
	&egw_cli_show_ip,
	&egw_cli_pppoe,
	&egw_cli_ppp,
	&egw_cli_show_pppoe,
	&egw_cli_show_pppoe_what,
	&egw_cli_radius,
	&egw_cli_show_radius,
	&egw_cli_show_radius_what,
	NULL,
};

/* ---- running lines --------------------------------------------------------- */

/* A line that matched nothing: say so, and show the commands that start with
 * the same word. */
static void
cli_nomatch(const char *line, int rc)
{
	const struct egw_cli_help *h;
	char word[32];
	size_t n;
	int hints = 0;

	while (*line == ' ' || *line == '\t')
		line++;
	n = strcspn(line, " \t");
	if (n >= sizeof(word))
		n = sizeof(word) - 1;
	memcpy(word, line, n);
	word[n] = '\0';
	egw_cli_fail("%s '%s'",
		     rc == CMDLINE_PARSE_AMBIGUOUS ? "ambiguous command"
						   : "unknown command or bad arguments:",
		     line);
	for (h = egw_cli_help_table; h->topic != NULL; h++) {
		if (strncmp(h->syntax, word, n) == 0 &&
		    (h->syntax[n] == ' ' || h->syntax[n] == '\0')) {
			fprintf(stderr, "%s  usage: %s\n", cli_where, h->syntax);
			hints++;
		}
	}
	if (hints == 0)
		fprintf(stderr, "%s  type 'help' for the list of commands\n", cli_where);
}

int
egw_cli_split(char *s, char **w, int max)
{
	char *save = NULL, *t;
	int n = 0;

	for (t = strtok_r(s, " \t", &save); t != NULL; t = strtok_r(NULL, " \t", &save)) {
		if (n == max)
			return -E2BIG;
		w[n++] = t;
	}
	return n;
}

/* The line cli_exec() is running (NULL otherwise): the command callbacks
 * only see what the parser kept, which stops at a '#'. */
static const char *cli_raw;

bool
egw_cli_line_has_hash(struct cmdline *cl)
{
	const char *l = cli_raw;

	/* the prompt's line editor still holds the whole line during the call */
	if (l == NULL && cl != NULL && cl == cl_term)
		l = rdline_get_buffer(cmdline_get_rdline(cl));
	return l != NULL && strchr(l, '#') != NULL;
}

static int
cli_exec(struct cmdline *cl, const char *line)
{
	char buf[CLI_LINE_MAX + 2];
	size_t len = strlen(line);
	int rc;

	/* cmdline_parse() only runs a complete line: without its end-of-line
	 * it returns 0 ("incomplete") and calls nothing. On a match it returns
	 * the parsed length (>= 0), not CMDLINE_PARSE_SUCCESS. */
	if (len > CLI_LINE_MAX)
		len = CLI_LINE_MAX;
	memcpy(buf, line, len);
	buf[len] = '\n';
	buf[len + 1] = '\0';
	cli_rc = 0;
	cli_secret = false;
	cli_raw = buf;
	rc = cmdline_parse(cl, buf);
	cli_raw = NULL;
	/* a line may carry a key (esp sa add) or a secret (ppp user add): no
	 * copy outlives the call */
	explicit_bzero(buf, sizeof(buf));
	if (cli_secret)
		scrub_stack();
	fflush(stdout);
	if (rc >= 0)
		return cli_rc;
	cli_nomatch(line, rc);
	return -EINVAL;
}

static struct cmdline *
file_cmdline(void)
{
	if (cl_file == NULL)
		cl_file = cmdline_new(cli_ctx, "", STDIN_FILENO, STDOUT_FILENO);
	return cl_file;
}

int
egw_cli_run_line(const char *line)
{
	struct cmdline *cl = file_cmdline();

	if (cl == NULL)
		return -ENOMEM;
	if (strlen(line) > CLI_LINE_MAX) {
		cli_rc = 0;
		egw_cli_fail("line longer than %u characters", CLI_LINE_MAX);
		return -E2BIG;
	}
	return cli_exec(cl, line);
}

int
egw_cli_run_file(const char *path)
{
	char line[1024], iobuf[BUFSIZ];
	unsigned int lineno = 0;
	FILE *f;
	int rc = 0;

	f = fopen(path, "r");
	if (f == NULL) {
		fprintf(stderr, "error: --cmdline-file %s: %s\n", path, strerror(errno));
		return -errno;
	}
	/* our buffer, wiped at the end: the file may hold keys (esp sa add)
	 * and secrets (ppp user add) */
	setvbuf(f, iobuf, _IOFBF, sizeof(iobuf));
	while (fgets(line, sizeof(line), f) != NULL) {
		size_t n = strlen(line);
		const char *p = line;

		lineno++;
		snprintf(cli_where, sizeof(cli_where), "%s:%u: ", path, lineno);
		if (n == sizeof(line) - 1 && line[n - 1] != '\n') {
			cli_rc = 0;
			egw_cli_fail("line longer than %u characters", CLI_LINE_MAX);
			rc = -E2BIG;
			break;
		}
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\0' || *p == '#')
			continue;
		rc = egw_cli_run_line(p);
		explicit_bzero(line, sizeof(line)); /* keys, secrets */
		if (rc != 0 || __atomic_load_n(&egw.quit, __ATOMIC_RELAXED))
			break;
	}
	if (rc == 0 && ferror(f)) {
		fprintf(stderr, "error: --cmdline-file %s: read error\n", path);
		rc = -EIO;
	}
	cli_where[0] = '\0';
	fclose(f);
	explicit_bzero(iobuf, sizeof(iobuf));
	explicit_bzero(line, sizeof(line));
	return rc;
}

/* ---- interactive ------------------------------------------------------------ */

int
egw_cli_interactive_init(void)
{
	cl_term = cmdline_stdin_new(cli_ctx, "edgegw> ");
	return cl_term != NULL ? 0 : -ENOMEM;
}

/* Wait up to timeout_ms for input and feed it to the line editor; sleeps
 * instead of spinning. Returns 1 when the user quit or input ended. */
int
egw_cli_interactive_poll(int timeout_ms)
{
	struct pollfd pfd = {.fd = STDIN_FILENO, .events = POLLIN};
	char buf[256];
	ssize_t n;
	int rc;

	if (poll(&pfd, 1, timeout_ms) <= 0)
		return 0;
	n = read(STDIN_FILENO, buf, sizeof(buf));
	if (n <= 0)
		return 1;
	cli_rc = 0;
	cli_secret = false;
	rc = cmdline_in(cl_term, buf, (int)n);
	explicit_bzero(buf, sizeof(buf));
	/* a line that carried a key leaves the history (up-arrow) */
	if (cli_secret) {
		rdline_clear_history(cmdline_get_rdline(cl_term));
		scrub_stack();
	}
	if (rc < 0)
		return 1;
	fflush(stdout);
	return __atomic_load_n(&egw.quit, __ATOMIC_RELAXED) ? 1 : 0;
}

void
egw_cli_interactive_exit(void)
{
	if (cl_term != NULL) {
		cmdline_stdin_exit(cl_term);
		cl_term = NULL;
	}
	if (cl_file != NULL) {
		cmdline_free(cl_file);
		cl_file = NULL;
	}
}
