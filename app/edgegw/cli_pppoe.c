/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * PPPoE and PPP commands (lib/pppoe):
 *   pppoe ac-name <name>
 *   pppoe service-name add|del <name>
 *   pppoe pool add|del <prefix>
 *   pppoe dns <primary> [<secondary>] | none
 *   pppoe limit sessions|per-mac|starting <n>
 *   pppoe limit padi|padr <per-second> <per-second-per-mac>
 *   pppoe limit auth-hold <seconds>
 *   pppoe mru <n>
 *   pppoe mss-clamp auto|off|<value>
 *   pppoe keepalive <interval-s> <misses>
 *   pppoe filter pass|active [user <name>|set <name>] <pcap expression>|none
 *   pppoe idle-timeout <seconds>
 *   pppoe session clear <id>|all
 *   ppp auth pap|chap|none [local|radius|radius local]
 *   ppp user add <name> <secret> [address <A>] [filter <set>]
 *   ppp user del <name>
 *   show pppoe sessions [detail] | stats | filters
 * Each checks its words before it changes anything; the library checks the
 * rest and changes nothing when it refuses. They run under egw.ctrl_lock,
 * as the control path does: the library's control state has one writer at
 * a time. A secret never appears in a message, and every copy of a line
 * that carries one made here is wiped (cli.c wipes its own and the
 * parser's).
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <cmdline_parse.h>
#include <cmdline_parse_string.h>

#include "cli.h"
#include "fwd.h"

#define PPPOE_MAX_WORDS 8
/* Room for the control counters lib/pppoe reports. */
#define CTRL_CNT_MAX 256

struct pppoe_args {
	int n;
	char *w[PPPOE_MAX_WORDS];
};

static int
split(char *s, struct pppoe_args *a)
{
	a->n = egw_cli_split(s, a->w, PPPOE_MAX_WORDS);
	return a->n < 0 ? a->n : 0;
}

/* A name (AC-Name, Service-Name, user): 1..EGW_PPPOE_NAME_MAX printable
 * characters. */
static int
check_name(const char *cmd, const char *what, const char *s)
{
	size_t n = strlen(s), i;

	if (n == 0 || n > EGW_PPPOE_NAME_MAX) {
		egw_cli_fail("%s: %s of %zu characters: 1..%u", cmd, what, n, EGW_PPPOE_NAME_MAX);
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		if (!isgraph((unsigned char)s[i])) {
			egw_cli_fail("%s: %s: character %zu is not printable", cmd, what, i + 1);
			return -EINVAL;
		}
	}
	return 0;
}

/* A unicast IPv4 address, in network order. */
static int
parse_ip4(const char *cmd, const char *what, const char *s, rte_be32_t *a)
{
	if (inet_pton(AF_INET, s, a) != 1) {
		egw_cli_fail("%s: %s '%s': not an IPv4 address", cmd, what, s);
		return -EINVAL;
	}
	if (*a == 0 || *a == RTE_BE32(0xffffffff) || (rte_be_to_cpu_32(*a) >> 28) == 0xe) {
		egw_cli_fail("%s: %s %s: not a unicast address", cmd, what, s);
		return -EINVAL;
	}
	return 0;
}

/* A bounded number argument. */
static int
num_arg(const char *cmd, const char *what, const char *s, uint64_t min, uint64_t max, uint64_t *v)
{
	if (egw_parse_u64(s, min, max, v) == 0)
		return 0;
	egw_cli_fail("%s: %s '%s': %" PRIu64 "..%" PRIu64, cmd, what, s, min, max);
	return -EINVAL;
}

/* ---- pppoe ... --------------------------------------------------------------- */

static void
ac_name(struct pppoe_args *a)
{
	int rc;

	if (a->n != 2) {
		egw_cli_fail("usage: pppoe ac-name <name> (one word)");
		return;
	}
	if (check_name("pppoe ac-name", "name", a->w[1]) < 0)
		return;
	rc = egw_pppoe_set_ac_name(a->w[1]);
	if (rc < 0) {
		egw_cli_fail("pppoe ac-name %s: %s", a->w[1], strerror(-rc));
		return;
	}
	printf("pppoe: ac-name %s\n", a->w[1]);
}

static void
service_name(struct pppoe_args *a)
{
	bool add;
	int rc;

	if (a->n != 3 || (strcmp(a->w[1], "add") != 0 && strcmp(a->w[1], "del") != 0)) {
		egw_cli_fail("usage: pppoe service-name add|del <name>");
		return;
	}
	add = strcmp(a->w[1], "add") == 0;
	if (check_name("pppoe service-name", "name", a->w[2]) < 0)
		return;
	rc = add ? egw_pppoe_service_add(a->w[2]) : egw_pppoe_service_del(a->w[2]);
	if (rc == -EEXIST)
		egw_cli_fail("pppoe service-name add: '%s' is already served", a->w[2]);
	else if (rc == -ENOENT)
		egw_cli_fail("pppoe service-name del: '%s' is not served", a->w[2]);
	else if (rc == -ENOSPC)
		egw_cli_fail("pppoe service-name add %s: no room for another service name",
			     a->w[2]);
	else if (rc < 0)
		egw_cli_fail("pppoe service-name %s %s: %s", a->w[1], a->w[2], strerror(-rc));
	else
		printf("pppoe: service-name %s %s\n", a->w[2], add ? "added" : "deleted");
}

static void
pool(struct pppoe_args *a)
{
	char err[256] = "";
	bool add;
	int rc;

	if (a->n != 3 || (strcmp(a->w[1], "add") != 0 && strcmp(a->w[1], "del") != 0)) {
		egw_cli_fail("usage: pppoe pool add|del <prefix>");
		return;
	}
	add = strcmp(a->w[1], "add") == 0;
	if (strchr(a->w[2], '/') == NULL) {
		egw_cli_fail("pppoe pool %s: '%s': a prefix addr/len (IPv4 /8../30, IPv6 /32../63)",
			     a->w[1], a->w[2]);
		return;
	}
	/* the pool's route (type pppoe) first: the FIB sends its addresses
	 * to the sessions; refused (a route of that prefix exists), no pool */
	if (add && egw_ip_cli_session_route(a->w[2], true, err, sizeof(err)) < 0) {
		egw_cli_fail("pppoe pool add %s: its route: %s", a->w[2], err);
		return;
	}
	rc = add ? egw_pppoe_pool_add(a->w[2], err, sizeof(err))
		 : egw_pppoe_pool_del(a->w[2], err, sizeof(err));
	if (rc >= 0) {
		if (!add)
			egw_ip_cli_session_route(a->w[2], false, err, sizeof(err));
		/* steered to edgegw on a NIC shared with the kernel: refused (map
		 * full), the pool and its route go again */
		if (egw_xdp_hook_pool(a->w[2], add, err, sizeof(err)) < 0) {
			char e2[160];

			if (!add) {
				egw_cli_fail("pppoe pool del %s: deleted, but %s", a->w[2], err);
				return;
			}
			egw_pppoe_pool_del(a->w[2], e2, sizeof(e2));
			egw_ip_cli_session_route(a->w[2], false, e2, sizeof(e2));
			egw_cli_fail("pppoe pool add %s: %s: the pool was not added", a->w[2], err);
			return;
		}
		printf("pppoe: pool %s %s\n", a->w[2], add ? "added" : "deleted");
		return;
	}
	if (add) {
		char e2[160];

		egw_ip_cli_session_route(a->w[2], false, e2, sizeof(e2));
	}
	if (err[0] != '\0')
		egw_cli_fail("pppoe pool %s %s: %s", a->w[1], a->w[2], err);
	else if (rc == -EEXIST)
		egw_cli_fail("pppoe pool add %s: overlaps a pool", a->w[2]);
	else if (rc == -ENOENT)
		egw_cli_fail("pppoe pool del %s: no such pool", a->w[2]);
	else if (rc == -EBUSY)
		egw_cli_fail("pppoe pool del %s: sessions hold addresses from it", a->w[2]);
	else if (rc == -ENOSPC)
		egw_cli_fail("pppoe pool add %s: no room for another pool", a->w[2]);
	else
		egw_cli_fail("pppoe pool %s %s: %s", a->w[1], a->w[2], strerror(-rc));
}

static void
dns(struct pppoe_args *a)
{
	rte_be32_t d[2] = {0, 0};
	char s0[INET_ADDRSTRLEN], s1[INET_ADDRSTRLEN];
	int rc, i;

	if (a->n == 2 && strcmp(a->w[1], "none") == 0) {
		rc = egw_pppoe_set_dns(0, 0);
		if (rc < 0)
			egw_cli_fail("pppoe dns none: %s", strerror(-rc));
		else
			printf("pppoe: no DNS server offered\n");
		return;
	}
	if (a->n != 2 && a->n != 3) {
		egw_cli_fail("usage: pppoe dns <primary> [<secondary>] | pppoe dns none");
		return;
	}
	for (i = 1; i < a->n; i++)
		if (parse_ip4("pppoe dns", i == 1 ? "primary" : "secondary", a->w[i], &d[i - 1]) <
		    0)
			return;
	rc = egw_pppoe_set_dns(d[0], d[1]);
	if (rc < 0) {
		egw_cli_fail("pppoe dns: %s", strerror(-rc));
		return;
	}
	inet_ntop(AF_INET, &d[0], s0, sizeof(s0));
	inet_ntop(AF_INET, &d[1], s1, sizeof(s1));
	printf("pppoe: dns %s%s%s\n", s0, d[1] != 0 ? " " : "", d[1] != 0 ? s1 : "");
}

#define LIMIT_USAGE                                                                               \
	"usage: pppoe limit sessions|per-mac|starting <n> | padi|padr <per-s> <per-s-per-mac> | " \
	"auth-hold <s>"

/* The flood guard's settings: pppoe limit starting|padi|padr|auth-hold. */
static void
limit_guard(struct pppoe_args *a, const struct egw_pppoe_config *c, unsigned int table)
{
	struct egw_pppoe_guard g = c->guard;
	uint64_t v, v2 = 0;
	bool rate = strcmp(a->w[1], "padi") == 0 || strcmp(a->w[1], "padr") == 0;
	int rc;

	if (a->n != (rate ? 4 : 3)) {
		egw_cli_fail(LIMIT_USAGE);
		return;
	}
	if (rate) {
		if (egw_parse_u64(a->w[2], 1, EGW_PPPOE_DISC_RATE_MAX, &v) < 0 ||
		    egw_parse_u64(a->w[3], 1, EGW_PPPOE_DISC_RATE_MAX, &v2) < 0) {
			egw_cli_fail("pppoe limit %s '%s' '%s': rates per second, 1..%u", a->w[1],
				     a->w[2], a->w[3], EGW_PPPOE_DISC_RATE_MAX);
			return;
		}
		if (a->w[1][3] == 'i') {
			g.padi_rate = (unsigned int)v;
			g.padi_rate_mac = (unsigned int)v2;
		} else {
			g.padr_rate = (unsigned int)v;
			g.padr_rate_mac = (unsigned int)v2;
		}
	} else if (strcmp(a->w[1], "starting") == 0) {
		if (egw_parse_u64(a->w[2], 1, table, &v) < 0) {
			egw_cli_fail("pppoe limit starting '%s': 1..%u (the session table's size, "
				     "--pppoe-sessions)",
				     a->w[2], table);
			return;
		}
		g.max_starting = (unsigned int)v;
	} else {
		if (egw_parse_u64(a->w[2], 1, 86400, &v) < 0) {
			egw_cli_fail("pppoe limit auth-hold '%s': seconds, 1..86400", a->w[2]);
			return;
		}
		g.auth_hold_s = (unsigned int)v;
	}
	rc = egw_pppoe_set_guard(&g);
	if (rc < 0) {
		egw_cli_fail("pppoe limit %s: %s", a->w[1], strerror(-rc));
		return;
	}
	if (rate)
		printf("pppoe: at most %" PRIu64 " %ss per second, %" PRIu64
		       " per second per client MAC\n",
		       v, a->w[1][3] == 'i' ? "PADI" : "PADR", v2);
	else if (a->w[1][0] == 's')
		printf("pppoe: at most %" PRIu64 " sessions negotiating at once\n", v);
	else
		printf("pppoe: a MAC is held at most %" PRIu64 " s after failed logins\n", v);
}

static void
limit(struct pppoe_args *a)
{
	unsigned int table =
		egw.opts.pppoe_sessions != 0 ? egw.opts.pppoe_sessions : EGW_PPPOE_MAX_SESSIONS;
	struct egw_pppoe_config c;
	bool sessions;
	uint64_t v;
	int rc;

	if (a->n < 3) {
		egw_cli_fail(LIMIT_USAGE);
		return;
	}
	egw_pppoe_config_get(&c);
	if (strcmp(a->w[1], "starting") == 0 || strcmp(a->w[1], "padi") == 0 ||
	    strcmp(a->w[1], "padr") == 0 || strcmp(a->w[1], "auth-hold") == 0) {
		limit_guard(a, &c, table);
		return;
	}
	if (a->n != 3 || (strcmp(a->w[1], "sessions") != 0 && strcmp(a->w[1], "per-mac") != 0)) {
		egw_cli_fail(LIMIT_USAGE);
		return;
	}
	sessions = strcmp(a->w[1], "sessions") == 0;
	if (egw_parse_u64(a->w[2], 1, sessions ? table : EGW_PPPOE_MAX_SESSIONS, &v) < 0) {
		egw_cli_fail("pppoe limit %s '%s': 1..%u%s", a->w[1], a->w[2],
			     sessions ? table : EGW_PPPOE_MAX_SESSIONS,
			     sessions ? " (the session table's size, --pppoe-sessions)" : "");
		return;
	}
	rc = sessions ? egw_pppoe_set_limits((unsigned int)v, c.max_per_mac)
		      : egw_pppoe_set_limits(c.max_sessions, (unsigned int)v);
	if (rc < 0) {
		egw_cli_fail("pppoe limit %s %" PRIu64 ": %s", a->w[1], v, strerror(-rc));
		return;
	}
	printf("pppoe: at most %" PRIu64 " sessions%s\n", v, sessions ? "" : " per client MAC");
}

static void
mru(struct pppoe_args *a)
{
	uint64_t v;
	int rc;

	if (a->n != 2) {
		egw_cli_fail("usage: pppoe mru <n>");
		return;
	}
	if (num_arg("pppoe mru", "MRU", a->w[1], 576, EGW_PPPOE_MRU_MAX, &v) < 0)
		return;
	rc = egw_pppoe_set_mru((uint16_t)v);
	if (rc < 0) {
		egw_cli_fail("pppoe mru %" PRIu64 ": %s", v, strerror(-rc));
		return;
	}
	printf("pppoe: mru %" PRIu64 "\n", v);
}

static void
mss_clamp(struct pppoe_args *a)
{
	enum egw_pppoe_mss_mode mode;
	uint64_t v = 0;
	int rc;

	if (a->n != 2) {
		egw_cli_fail("usage: pppoe mss-clamp auto|off|<value>");
		return;
	}
	if (strcmp(a->w[1], "auto") == 0) {
		mode = EGW_PPPOE_MSS_AUTO;
	} else if (strcmp(a->w[1], "off") == 0) {
		mode = EGW_PPPOE_MSS_OFF;
	} else {
		if (num_arg("pppoe mss-clamp", "value", a->w[1], 536, EGW_PPPOE_MRU_MAX - 40, &v) <
		    0)
			return;
		mode = EGW_PPPOE_MSS_FIXED;
	}
	rc = egw_pppoe_set_mss_clamp(mode, (uint16_t)v);
	if (rc < 0) {
		egw_cli_fail("pppoe mss-clamp %s: %s", a->w[1], strerror(-rc));
		return;
	}
	printf("pppoe: mss-clamp %s\n", a->w[1]);
}

static void
keepalive(struct pppoe_args *a)
{
	uint64_t interval, misses;
	int rc;

	if (a->n != 3) {
		egw_cli_fail("usage: pppoe keepalive <interval-s> <misses> (interval 0 = off)");
		return;
	}
	if (num_arg("pppoe keepalive", "interval", a->w[1], 0, 3600, &interval) < 0 ||
	    num_arg("pppoe keepalive", "misses", a->w[2], 1, 255, &misses) < 0)
		return;
	rc = egw_pppoe_set_keepalive((unsigned int)interval, (unsigned int)misses);
	if (rc < 0) {
		egw_cli_fail("pppoe keepalive %s %s: %s", a->w[1], a->w[2], strerror(-rc));
		return;
	}
	if (interval == 0)
		printf("pppoe: keepalive off\n");
	else
		printf("pppoe: LCP echo every %" PRIu64 " s, close after %" PRIu64 " misses\n",
		       interval, misses);
}

static void
session_clear(struct pppoe_args *a)
{
	uint64_t sid;
	int rc;

	if (a->n != 3 || strcmp(a->w[1], "clear") != 0) {
		egw_cli_fail("usage: pppoe session clear <id>|all");
		return;
	}
	if (strcmp(a->w[2], "all") == 0) {
		printf("pppoe: %u sessions closing\n", egw_pppoe_session_clear_all());
		return;
	}
	if (egw_parse_num(a->w[2], 1, EGW_PPPOE_MAX_SESSIONS, &sid) < 0) {
		egw_cli_fail("pppoe session clear: id '%s': 1..%u (decimal or 0x hex) or all",
			     a->w[2], EGW_PPPOE_MAX_SESSIONS);
		return;
	}
	rc = egw_pppoe_session_clear((uint16_t)sid);
	if (rc == -ENOENT) {
		egw_cli_fail("pppoe session clear: no session %" PRIu64, sid);
		return;
	}
	if (rc < 0) {
		egw_cli_fail("pppoe session clear %" PRIu64 ": %s", sid, strerror(-rc));
		return;
	}
	printf("pppoe: session %" PRIu64 " closing\n", sid);
}

/* pppoe filter pass|active [user <name>|set <name>] <expression>|none: the
 * rest of the line after the kind (and user or set) is the expression, as
 * pppd takes it. */
static void
filter_cmd(char *line)
{
	char *p = line + strlen("filter"), *kind, *user = NULL, *set = NULL, err[256];
	enum egw_pppoe_filter_kind k;
	int rc;

	while (*p == ' ' || *p == '\t')
		p++;
	kind = p;
	p += strcspn(p, " \t");
	if (*p != '\0')
		*p++ = '\0';
	if (strcmp(kind, "pass") == 0) {
		k = EGW_PPPOE_FILTER_PASS;
	} else if (strcmp(kind, "active") == 0) {
		k = EGW_PPPOE_FILTER_ACTIVE;
	} else {
		egw_cli_fail("usage: pppoe filter pass|active [user <name>|set <name>] <pcap "
			     "expression>|none");
		return;
	}
	while (*p == ' ' || *p == '\t')
		p++;
	if (strncmp(p, "user", 4) == 0 && (p[4] == ' ' || p[4] == '\t')) {
		p += 5;
		while (*p == ' ' || *p == '\t')
			p++;
		user = p;
		p += strcspn(p, " \t");
		if (*p != '\0')
			*p++ = '\0';
		if (check_name("pppoe filter", "user", user) < 0)
			return;
		while (*p == ' ' || *p == '\t')
			p++;
	} else if (strncmp(p, "set", 3) == 0 && (p[3] == ' ' || p[3] == '\t')) {
		p += 4;
		while (*p == ' ' || *p == '\t')
			p++;
		set = p;
		p += strcspn(p, " \t");
		if (*p != '\0')
			*p++ = '\0';
		if (check_name("pppoe filter", "set", set) < 0)
			return;
		while (*p == ' ' || *p == '\t')
			p++;
	}
	if (*p == '\0') {
		egw_cli_fail("pppoe filter %s: an expression (pcap-filter(7)) or none", kind);
		return;
	}
	if (set != NULL)
		rc = egw_pppoe_set_filter_set(k, set, strcmp(p, "none") == 0 ? NULL : p, err,
					      sizeof(err));
	else
		rc = egw_pppoe_set_filter(k, user, strcmp(p, "none") == 0 ? NULL : p, err,
					  sizeof(err));
	if (rc < 0) {
		egw_cli_fail("pppoe filter %s%s%s: %s (the filter in place stays)", kind,
			     user != NULL  ? " user "
			     : set != NULL ? " set "
					   : "",
			     user != NULL  ? user
			     : set != NULL ? set
					   : "",
			     err);
		return;
	}
	printf("pppoe: %s filter%s%s %s\n", kind,
	       user != NULL  ? " of "
	       : set != NULL ? " of set "
			     : "",
	       user != NULL  ? user
	       : set != NULL ? set
			     : "",
	       strcmp(p, "none") == 0 ? "removed" : "set");
}

static void
idle_timeout(struct pppoe_args *a)
{
	uint64_t v;

	if (a->n != 2) {
		egw_cli_fail("usage: pppoe idle-timeout <seconds> (0 = off)");
		return;
	}
	if (num_arg("pppoe idle-timeout", "seconds", a->w[1], 0, 604800, &v) < 0)
		return;
	if (egw_pppoe_set_idle_timeout((unsigned int)v) < 0) {
		egw_cli_fail("pppoe idle-timeout %s: refused", a->w[1]);
		return;
	}
	if (v == 0)
		printf("pppoe: idle timeout off\n");
	else
		printf("pppoe: sessions idle for %" PRIu64 " s are closed\n", v);
}

static void
pppoe_run(char *line)
{
	struct pppoe_args a;

	if (strncmp(line, "filter", 6) == 0 && (line[6] == ' ' || line[6] == '\t')) {
		filter_cmd(line);
		return;
	}

	if (split(line, &a) < 0 || a.n == 0) {
		egw_cli_fail("pppoe: see 'help pppoe'%s", a.n != 0 ? " (too many words)" : "");
		return;
	}
	if (strcmp(a.w[0], "ac-name") == 0)
		ac_name(&a);
	else if (strcmp(a.w[0], "service-name") == 0)
		service_name(&a);
	else if (strcmp(a.w[0], "pool") == 0)
		pool(&a);
	else if (strcmp(a.w[0], "dns") == 0)
		dns(&a);
	else if (strcmp(a.w[0], "limit") == 0)
		limit(&a);
	else if (strcmp(a.w[0], "mru") == 0)
		mru(&a);
	else if (strcmp(a.w[0], "mss-clamp") == 0)
		mss_clamp(&a);
	else if (strcmp(a.w[0], "keepalive") == 0)
		keepalive(&a);
	else if (strcmp(a.w[0], "session") == 0)
		session_clear(&a);
	else if (strcmp(a.w[0], "idle-timeout") == 0)
		idle_timeout(&a);
	else
		egw_cli_fail("pppoe: unknown '%s' (ac-name, service-name, pool, dns, limit, mru, "
			     "mss-clamp, keepalive, filter, idle-timeout, session clear)",
			     a.w[0]);
}

/* ---- ppp ... ----------------------------------------------------------------- */

static void
auth(struct pppoe_args *a)
{
	static const struct {
		const char *name;
		enum egw_pppoe_auth auth;
	} modes[] = {
		{"pap", EGW_PPPOE_AUTH_PAP},
		{"chap", EGW_PPPOE_AUTH_CHAP},
		{"none", EGW_PPPOE_AUTH_NONE},
	};
	enum egw_pppoe_auth_order order = EGW_PPPOE_AUTH_LOCAL;
	const char *order_name = "local";
	unsigned int k;
	int rc;

	if (a->n < 2 || a->n > 4) {
		egw_cli_fail("usage: ppp auth pap|chap|none [local|radius|radius local]");
		return;
	}
	/* where the credentials are checked: local, radius, or radius then local */
	if (a->n == 3 && strcmp(a->w[2], "local") == 0) {
		order = EGW_PPPOE_AUTH_LOCAL;
	} else if (a->n == 3 && strcmp(a->w[2], "radius") == 0) {
		order = EGW_PPPOE_AUTH_REMOTE;
		order_name = "radius";
	} else if (a->n == 4 && strcmp(a->w[2], "radius") == 0 && strcmp(a->w[3], "local") == 0) {
		order = EGW_PPPOE_AUTH_REMOTE_LOCAL;
		order_name = "radius, then local when no server answers";
	} else if (a->n != 2) {
		egw_cli_fail("ppp auth %s: then local, radius, or radius local", a->w[1]);
		return;
	}
	for (k = 0; k < RTE_DIM(modes); k++)
		if (strcmp(a->w[1], modes[k].name) == 0)
			break;
	if (k == RTE_DIM(modes)) {
		egw_cli_fail("ppp auth: '%s': pap, chap or none", a->w[1]);
		return;
	}
	rc = egw_pppoe_set_auth(modes[k].auth);
	if (rc == 0)
		rc = egw_pppoe_set_auth_order(order);
	if (rc < 0) {
		egw_cli_fail("ppp auth %s: %s", a->w[1], strerror(-rc));
		return;
	}
	printf("ppp: auth %s (%s)\n", a->w[1], order_name);
}

static void
user_add(struct pppoe_args *a)
{
	static const char *const cmd = "ppp user add";
	rte_be32_t addr = 0;
	size_t n;
	int rc;

	const char *set = NULL, *addr_s = NULL;
	unsigned int i;

	if (a->n < 4 || a->n % 2 != 0) {
		egw_cli_fail("usage: ppp user add <name> <secret> [address <A>] [filter <set>]");
		return;
	}
	for (i = 4; i + 1 < (unsigned int)a->n; i += 2) {
		if (strcmp(a->w[i], "address") == 0 && addr_s == NULL) {
			addr_s = a->w[i + 1];
		} else if (strcmp(a->w[i], "filter") == 0 && set == NULL) {
			set = a->w[i + 1];
		} else {
			egw_cli_fail("usage: ppp user add <name> <secret> [address <A>] [filter "
				     "<set>]");
			return;
		}
	}
	/* checked before the user exists: a refused line changes nothing */
	if (set != NULL && !egw_pppoe_filter_set_exists(set)) {
		egw_cli_fail("%s %s: no filter set '%s' (pppoe filter pass|active set %s ...)", cmd,
			     a->w[2], set, set);
		return;
	}
	if (check_name(cmd, "name", a->w[2]) < 0)
		return;
	/* the secret is never echoed, not even in part */
	n = strlen(a->w[3]);
	if (n > EGW_PPPOE_NAME_MAX) {
		egw_cli_fail("%s %s: secret of %zu characters: at most %u", cmd, a->w[2], n,
			     EGW_PPPOE_NAME_MAX);
		return;
	}
	if (addr_s != NULL && parse_ip4(cmd, "address", addr_s, &addr) < 0)
		return;
	rc = egw_pppoe_user_add(a->w[2], a->w[3], addr);
	if (rc == -EEXIST && addr_s != NULL)
		egw_cli_fail("%s %s: the user exists, or address %s is another user's or in use",
			     cmd, a->w[2], addr_s);
	else if (rc == -EEXIST)
		egw_cli_fail("%s: user '%s' exists", cmd, a->w[2]);
	else if (rc == -ENOSPC)
		egw_cli_fail("%s %s: no room for another user", cmd, a->w[2]);
	else if (rc == -EINVAL && addr_s != NULL)
		egw_cli_fail("%s %s: address %s cannot be given to a subscriber (a pool's own "
			     "address or outside any usable range)",
			     cmd, a->w[2], addr_s);
	else if (rc < 0)
		egw_cli_fail("%s %s: %s", cmd, a->w[2], strerror(-rc));
	if (rc < 0)
		return;
	if (set != NULL)
		egw_pppoe_user_set_filter_set(a->w[2], set); /* the set exists (above) */
	printf("ppp: user %s added%s%s%s%s\n", a->w[2], addr_s != NULL ? ", address " : "",
	       addr_s != NULL ? addr_s : "", set != NULL ? ", filter set " : "",
	       set != NULL ? set : "");
}

static void
user_del(struct pppoe_args *a)
{
	int rc;

	if (a->n != 3) {
		egw_cli_fail("usage: ppp user del <name>");
		return;
	}
	if (check_name("ppp user del", "name", a->w[2]) < 0)
		return;
	rc = egw_pppoe_user_del(a->w[2]);
	if (rc == -ENOENT)
		egw_cli_fail("ppp user del: no user '%s'", a->w[2]);
	else if (rc < 0)
		egw_cli_fail("ppp user del %s: %s", a->w[2], strerror(-rc));
	else
		printf("ppp: user %s deleted\n", a->w[2]);
}

static void
ppp_run(char *line)
{
	struct pppoe_args a;

	if (split(line, &a) < 0 || a.n == 0) {
		egw_cli_fail("ppp: see 'help pppoe'%s", a.n != 0 ? " (too many words)" : "");
		return;
	}
	if (strcmp(a.w[0], "auth") == 0)
		auth(&a);
	else if (a.n >= 2 && strcmp(a.w[0], "user") == 0 && strcmp(a.w[1], "add") == 0)
		user_add(&a);
	else if (a.n >= 2 && strcmp(a.w[0], "user") == 0 && strcmp(a.w[1], "del") == 0)
		user_del(&a);
	else if (strcmp(a.w[0], "user") == 0)
		egw_cli_fail("ppp user: 'add' or 'del' expected");
	else
		egw_cli_fail("ppp: unknown '%s' (auth, user add|del)", a.w[0]);
}

/* ---- dispatch ------------------------------------------------------------------ */

struct pppoe_res {
	cmdline_fixed_string_t w0;
	cmdline_fixed_string_t w1;
	cmdline_multi_string_t rest;
};

static void
cmd_pppoe(void *pr, struct cmdline *cl, void *data)
{
	struct pppoe_res *res = pr;
	char line[sizeof(res->rest)];
	bool ppp = data != NULL;

	snprintf(line, sizeof(line), "%s", res->rest);
	/* ppp user add carries a secret: neither copy outlives the command */
	explicit_bzero(res->rest, sizeof(res->rest));
	if (ppp)
		egw_cli_secret();
	/* names and secrets would be cut at the '#' without a word */
	if (egw_cli_line_has_hash(cl)) {
		egw_cli_fail("%s: '#' starts a comment: names and secrets cannot contain it, and "
			     "a pppoe/ppp line cannot end in a comment",
			     ppp ? "ppp" : "pppoe");
		explicit_bzero(line, sizeof(line));
		return;
	}
	rte_spinlock_lock(&egw.ctrl_lock);
	if (!egw.pppoe)
		egw_cli_fail("%s: PPPoE not initialised", ppp ? "ppp" : "pppoe");
	else if (ppp)
		ppp_run(line);
	else
		pppoe_run(line);
	rte_spinlock_unlock(&egw.ctrl_lock);
	explicit_bzero(line, sizeof(line));
}

/* ---- show pppoe ----------------------------------------------------------------- */

static void
vlan_str(const struct egw_pppoe_session_info *s, char *buf, size_t len)
{
	if (s->n_vlan == 0)
		snprintf(buf, len, "-");
	else if (s->n_vlan == 1)
		snprintf(buf, len, "%u", s->vlan[0]);
	else
		snprintf(buf, len, "%u.%u", s->vlan[0], s->vlan[1]);
}

static void
ip6_prefix_str(const uint8_t a[16], char *buf, size_t len)
{
	static const uint8_t zero[16];
	char s[INET6_ADDRSTRLEN];

	if (memcmp(a, zero, sizeof(zero)) == 0 || inet_ntop(AF_INET6, a, s, sizeof(s)) == NULL)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%s/64", s);
}

static int
show_session(const struct egw_pppoe_session_info *s, void *arg)
{
	char mac[RTE_ETHER_ADDR_FMT_SIZE], vlan[16], ip4[INET_ADDRSTRLEN],
		ip6[INET6_ADDRSTRLEN + 4];
	bool detail = arg != NULL;
	uint64_t up = s->uptime_s;

	rte_ether_format_addr(mac, sizeof(mac), &s->mac);
	vlan_str(s, vlan, sizeof(vlan));
	if (s->ip4 == 0 || inet_ntop(AF_INET, &s->ip4, ip4, sizeof(ip4)) == NULL)
		snprintf(ip4, sizeof(ip4), "-");
	ip6_prefix_str(s->ip6, ip6, sizeof(ip6));
	printf("  %-5u %-4u %-9s %s %-11s %-16s %-15s %-24s %" PRIu64 ":%02" PRIu64 ":%02" PRIu64
	       "\n",
	       s->sid, s->port, vlan, mac, egw_pppoe_state_name(s->state),
	       s->user[0] != '\0' ? s->user : "-", ip4, ip6, up / 3600, up / 60 % 60, up % 60);
	if (!detail)
		return 0;
	printf("        lcp %s ipcp %s ipv6cp %s mru %u peer iid "
	       "%02x%02x:%02x%02x:%02x%02x:%02x%02x echo missed %u\n",
	       s->lcp, s->ipcp, s->ipv6cp, s->mru, s->ip6_iid[0], s->ip6_iid[1], s->ip6_iid[2],
	       s->ip6_iid[3], s->ip6_iid[4], s->ip6_iid[5], s->ip6_iid[6], s->ip6_iid[7],
	       s->echo_missed);
	if (s->filter_set[0] != '\0')
		printf("        filter set %s\n", s->filter_set);
	printf("        data rx %" PRIu64 " packets %" PRIu64 " bytes, tx %" PRIu64
	       " packets %" PRIu64 " bytes; control rx %" PRIu64 " tx %" PRIu64 "\n",
	       s->rx_pkts, s->rx_bytes, s->tx_pkts, s->tx_bytes, s->ctrl_rx, s->ctrl_tx);
	/* what RADIUS gave it (a short hold of the lock: one session) */
	if (egw.radius) {
		char line[512];
		bool has;

		rte_spinlock_lock(&egw.ctrl_lock);
		has = egw_radius_stage_session_str(s->sid, line, sizeof(line));
		rte_spinlock_unlock(&egw.ctrl_lock);
		if (has)
			printf("        %s\n", line);
	}
	return 0;
}

/* A slice of sessions copied under the control lock, printed without it. */
#define SHOW_SLICE 64
struct show_slice {
	unsigned int n;
	struct egw_pppoe_session_info s[SHOW_SLICE];
};

static int
slice_add(const struct egw_pppoe_session_info *s, void *arg)
{
	struct show_slice *sl = arg;

	sl->s[sl->n++] = *s;
	return sl->n == SHOW_SLICE;
}

/* Takes ctrl_lock itself, a slice at a time: printing 65,534 sessions to a
 * slow terminal never holds the control path up for more than a slice. */
static void
show_sessions(bool detail)
{
	static struct show_slice sl;
	unsigned int count[4], total, next = 1, i;

	rte_spinlock_lock(&egw.ctrl_lock);
	total = egw_pppoe_session_count(count);
	rte_spinlock_unlock(&egw.ctrl_lock);
	printf("  %u sessions (negotiating %u, bound %u, closing %u)\n", total,
	       count[EGW_PPPOE_S_NEGOTIATING], count[EGW_PPPOE_S_BOUND],
	       count[EGW_PPPOE_S_CLOSING]);
	if (total == 0)
		return;
	printf("  %-5s %-4s %-9s %-17s %-11s %-16s %-15s %-24s %s\n", "id", "port", "vlan", "mac",
	       "state", "user", "ipv4", "ipv6 prefix", "uptime");
	do {
		sl.n = 0;
		rte_spinlock_lock(&egw.ctrl_lock);
		egw_pppoe_session_walk_from(next, slice_add, &sl);
		rte_spinlock_unlock(&egw.ctrl_lock);
		for (i = 0; i < sl.n; i++)
			show_session(&sl.s[i], detail ? (void *)1 : NULL);
		if (sl.n != 0)
			next = sl.s[sl.n - 1].sid + 1u;
	} while (sl.n == SHOW_SLICE);
}

static void
show_stats(void)
{
	const char *names[CTRL_CNT_MAX];
	uint64_t values[CTRL_CNT_MAX], drop[EGW_PPPOE_DROP_MAX], tx = 0, tx_drop = 0;
	unsigned int count[4], total, n, i;

	total = egw_pppoe_session_count(count);
	printf("  PPPoE sessions: %u (negotiating %u, bound %u, closing %u)\n", total,
	       count[EGW_PPPOE_S_NEGOTIATING], count[EGW_PPPOE_S_BOUND],
	       count[EGW_PPPOE_S_CLOSING]);
	printf("  control path:\n");
	n = egw_pppoe_ctrl_counters(names, values, CTRL_CNT_MAX);
	for (i = 0; i < n && i < CTRL_CNT_MAX; i++)
		printf("    %-28s %" PRIu64 "\n", names[i], values[i]);
	for (i = 0; i < egw.nb_workers; i++) {
		tx += EGW_CNT_READ(egw.workers[i]->stats.ctrl_tx);
		tx_drop += EGW_CNT_READ(egw.workers[i]->stats.ctrl_tx_drop);
	}
	printf("  control frames: %" PRIu64 " handed over, %" PRIu64 " freed unsent (ring full, "
	       "no port); sent %" PRIu64 ", refused by the TX queue %" PRIu64 "\n",
	       EGW_CNT_READ(egw.ctrl.tx), EGW_CNT_READ(egw.ctrl.tx_drop), tx, tx_drop);
	printf("  control path drops: %s %" PRIu64 "\n", egw_drop_names[EGW_DROP_PPPOE_NOT_ACCESS],
	       EGW_CNT_READ(egw.ctrl.drop[EGW_DROP_PPPOE_NOT_ACCESS]));
	printf("  data path drops (all ports and queues):\n");
	egw_pppoe_stage_drops(drop);
	for (i = 0; i < EGW_PPPOE_DROP_MAX; i++)
		printf("    %-22s %-10" PRIu64 " %s\n", egw_pppoe_drop_name(i), drop[i],
		       egw_pppoe_drop_desc(i));
}

static void
show_filter(const char *user, enum egw_pppoe_filter_kind kind, const char *expr, bool jit,
	    void *arg)
{
	unsigned int *n = arg;

	printf("  %-7s %-20s %-6s %s\n", kind == EGW_PPPOE_FILTER_PASS ? "pass" : "active",
	       user != NULL ? user : "(default)", jit ? "jit" : "interp", expr);
	(*n)++;
}

static void
show_filter_set(const char *set, enum egw_pppoe_filter_kind kind, const char *expr, bool jit,
		unsigned int sessions, void *arg)
{
	unsigned int *n = arg;
	char who[EGW_PPPOE_NAME_MAX + 8];

	snprintf(who, sizeof(who), "set %s", set);
	printf("  %-7s %-20s %-6s %s (%u sessions)\n",
	       kind == EGW_PPPOE_FILTER_PASS ? "pass" : "active", who, jit ? "jit" : "interp", expr,
	       sessions);
	(*n)++;
}

static void
show_filters(void)
{
	struct egw_pppoe_config c;
	unsigned int n = 0;

	egw_pppoe_config_get(&c);
	printf("  kind    user or set          run    expression\n");
	egw_pppoe_filters_walk(show_filter, &n);
	egw_pppoe_filter_sets_walk(show_filter_set, &n);
	if (n == 0)
		printf("  (no filter: every frame passes)\n");
	if (c.idle_timeout_s != 0)
		printf("  idle timeout: %u s (frames the active filter matches, or any without "
		       "one, count as activity)\n",
		       c.idle_timeout_s);
	else
		printf("  idle timeout: off\n");
}

static void
cmd_show_pppoe(void *pr, struct cmdline *cl __rte_unused, void *data)
{
	struct pppoe_res *res = pr;
	char line[sizeof(res->rest)];
	struct pppoe_args a;

	if (data == NULL) {
		egw_cli_fail("show pppoe: sessions [detail], stats or filters");
		return;
	}
	snprintf(line, sizeof(line), "%s", res->rest);
	if (split(line, &a) < 0 || a.n == 0 || a.n > 2 ||
	    (a.n == 2 && (strcmp(a.w[0], "sessions") != 0 || strcmp(a.w[1], "detail") != 0)) ||
	    (strcmp(a.w[0], "sessions") != 0 && strcmp(a.w[0], "stats") != 0 &&
	     strcmp(a.w[0], "filters") != 0)) {
		egw_cli_fail("show pppoe: '%s': sessions [detail], stats or filters", res->rest);
		return;
	}
	if (egw.pppoe && strcmp(a.w[0], "sessions") == 0) {
		show_sessions(a.n == 2); /* locks slice by slice */
		return;
	}
	rte_spinlock_lock(&egw.ctrl_lock);
	if (!egw.pppoe)
		egw_cli_fail("show pppoe: PPPoE not available");
	else if (strcmp(a.w[0], "filters") == 0)
		show_filters();
	else
		show_stats();
	rte_spinlock_unlock(&egw.ctrl_lock);
}

static cmdline_parse_token_string_t t_pppoe0 =
	TOKEN_STRING_INITIALIZER(struct pppoe_res, w0, "pppoe");
static cmdline_parse_token_string_t t_ppp0 = TOKEN_STRING_INITIALIZER(struct pppoe_res, w0, "ppp");
static cmdline_parse_token_string_t t_show0 =
	TOKEN_STRING_INITIALIZER(struct pppoe_res, w0, "show");
static cmdline_parse_token_string_t t_pppoe1 =
	TOKEN_STRING_INITIALIZER(struct pppoe_res, w1, "pppoe");
static cmdline_parse_token_string_t t_rest =
	TOKEN_STRING_INITIALIZER(struct pppoe_res, rest, TOKEN_STRING_MULTI);

cmdline_parse_inst_t egw_cli_pppoe = {
	.f = cmd_pppoe,
	.help_str = "pppoe ac-name|service-name|pool|dns|limit|mru|mss-clamp|keepalive|filter|"
		    "idle-timeout|session ...: PPPoE access concentrator (help pppoe)",
	.tokens = {(void *)&t_pppoe0, (void *)&t_rest, NULL},
};

cmdline_parse_inst_t egw_cli_ppp = {
	.f = cmd_pppoe,
	.data = (void *)1,
	.help_str = "ppp auth|user ...: PPP authentication and subscribers (help pppoe)",
	.tokens = {(void *)&t_ppp0, (void *)&t_rest, NULL},
};

cmdline_parse_inst_t egw_cli_show_pppoe = {
	.f = cmd_show_pppoe,
	.help_str = "show pppoe sessions [detail]|stats|filters",
	.tokens = {(void *)&t_show0, (void *)&t_pppoe1, NULL},
};

cmdline_parse_inst_t egw_cli_show_pppoe_what = {
	.f = cmd_show_pppoe,
	.data = (void *)1,
	.help_str = "show pppoe sessions [detail]|stats|filters",
	.tokens = {(void *)&t_show0, (void *)&t_pppoe1, (void *)&t_rest, NULL},
};
