/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RADIUS commands (lib/radius, stage_radius.c):
 *   radius server add <addr>[:<port>] secret <s> [acct-port <p>] [priority <n>]
 *          [timeout <ms>] [retries <n>]
 *   radius server del <addr>[:<port>]
 *   radius nas-identifier <s>
 *   radius nas-ip <addr>
 *   radius interim <s>
 *   radius dead-time <s>
 *   radius max-outstanding <n>
 *   radius dae listen <addr>[:<port>] client <addr> secret <s>
 *   show radius [servers|stats]
 * and --stats-json's "radius" object. They run under egw.ctrl_lock. A
 * secret is never printed, and the command line that carried it is wiped
 * (egw_cli_secret()).
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include <cmdline_parse.h>
#include <cmdline_parse_string.h>
#include <openssl/crypto.h>

#include "cli.h"
#include "egw_radius.h"
#include "fwd.h"

#define RADIUS_MAX_WORDS 16

struct radius_args {
	int n;
	char *w[RADIUS_MAX_WORDS];
};

static int
num(const char *cmd, const char *what, const char *s, uint64_t min, uint64_t max, uint64_t *v)
{
	if (egw_parse_u64(s, min, max, v) == 0)
		return 0;
	egw_cli_fail("%s: %s '%s': %" PRIu64 "..%" PRIu64, cmd, what, s, min, max);
	return -EINVAL;
}

static int
secret_ok(const char *cmd, const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > EGW_RADIUS_SECRET_MAX) {
		/* its length only, never its text */
		egw_cli_fail("%s: secret of %zu characters: 1..%u", cmd, n, EGW_RADIUS_SECRET_MAX);
		return -EINVAL;
	}
	return 0;
}

#define SERVER_USAGE                                                                          \
	"usage: radius server add <addr>[:<port>] secret <s> [acct-port <p>] [priority <n>] " \
	"[timeout <ms>] [retries <n>] | radius server del <addr>[:<port>]"

static void
server_cmd(struct radius_args *a, struct egw_radius *r)
{
	static const char *const cmd = "radius server add";
	struct egw_radius_server_conf c;
	char as[INET6_ADDRSTRLEN + 8];
	bool have_secret = false;
	uint64_t v;
	int i, rc;

	if (a->n == 3 && strcmp(a->w[1], "del") == 0) {
		struct sockaddr_storage sa;

		if (egw_radius_addr_parse(a->w[2], EGW_RADIUS_AUTH_PORT, &sa) < 0) {
			egw_cli_fail("radius server del: '%s': an address[:port]", a->w[2]);
			return;
		}
		rc = egw_radius_server_del(r, &sa);
		if (rc < 0)
			egw_cli_fail("radius server del %s: no such server", a->w[2]);
		else
			printf("radius: server %s deleted\n", a->w[2]);
		return;
	}
	if (a->n < 5 || strcmp(a->w[1], "add") != 0 || (a->n - 3) % 2 != 0) {
		egw_cli_fail(SERVER_USAGE);
		return;
	}
	memset(&c, 0, sizeof(c));
	if (egw_radius_addr_parse(a->w[2], EGW_RADIUS_AUTH_PORT, &c.addr) < 0) {
		egw_cli_fail("%s: '%s': an IPv4 or [IPv6] address, optionally :port", cmd, a->w[2]);
		return;
	}
	c.acct_port = EGW_RADIUS_ACCT_PORT;
	c.timeout_ms = EGW_RADIUS_TIMEOUT_MS_DEF;
	c.retries = EGW_RADIUS_RETRIES_DEF;
	for (i = 3; i + 1 < a->n; i += 2) {
		const char *k = a->w[i], *val = a->w[i + 1];

		if (strcmp(k, "secret") == 0) {
			if (secret_ok(cmd, val) < 0)
				goto out;
			c.secret_len = strlen(val);
			memcpy(c.secret, val, c.secret_len);
			have_secret = true;
		} else if (strcmp(k, "acct-port") == 0) {
			if (num(cmd, "acct-port", val, 1, 65535, &v) < 0)
				goto out;
			c.acct_port = (uint16_t)v;
		} else if (strcmp(k, "priority") == 0) {
			if (num(cmd, "priority", val, 0, 1000, &v) < 0)
				goto out;
			c.priority = (unsigned int)v;
		} else if (strcmp(k, "timeout") == 0) {
			if (num(cmd, "timeout", val, 10, 60000, &v) < 0)
				goto out;
			c.timeout_ms = (unsigned int)v;
		} else if (strcmp(k, "retries") == 0) {
			if (num(cmd, "retries", val, 0, 10, &v) < 0)
				goto out;
			c.retries = (unsigned int)v;
		} else {
			egw_cli_fail(
				"%s: unknown '%s' (secret, acct-port, priority, timeout, retries)",
				cmd, k);
			goto out;
		}
	}
	if (!have_secret) {
		egw_cli_fail("%s %s: a secret is required", cmd, a->w[2]);
		goto out;
	}
	rc = egw_radius_server_add(r, &c);
	egw_radius_addr_str(&c.addr, as, sizeof(as));
	if (rc == -EEXIST)
		egw_cli_fail("%s: server %s exists", cmd, as);
	else if (rc == -ENOSPC)
		egw_cli_fail("%s %s: at most %u servers", cmd, as, EGW_RADIUS_MAX_SERVERS);
	else if (rc < 0)
		egw_cli_fail("%s %s: %s", cmd, as, strerror(-rc));
	else
		printf("radius: server %s (accounting port %u) priority %u, timeout %u ms, %u "
		       "retries\n",
		       as, c.acct_port, c.priority, c.timeout_ms, c.retries);
out:
	OPENSSL_cleanse(&c, sizeof(c));
}

static bool
radius_same_addr(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	char x[INET6_ADDRSTRLEN + 8], y[INET6_ADDRSTRLEN + 8];

	egw_radius_addr_str(a, x, sizeof(x));
	egw_radius_addr_str(b, y, sizeof(y));
	return strcmp(x, y) == 0;
}

static void
dae_cmd(struct radius_args *a, struct egw_radius *r)
{
	struct sockaddr_storage la, ca, s_addr;
	char s[INET6_ADDRSTRLEN + 8];
	int rc;

	if (a->n != 7 || strcmp(a->w[1], "listen") != 0 || strcmp(a->w[3], "client") != 0 ||
	    strcmp(a->w[5], "secret") != 0) {
		egw_cli_fail("usage: radius dae listen <addr>[:<port>] client <addr> secret <s>");
		return;
	}
	if (egw_radius_addr_parse(a->w[2], EGW_RADIUS_DAE_PORT, &la) < 0 ||
	    egw_radius_addr_parse(a->w[4], 0, &ca) < 0) {
		egw_cli_fail("radius dae listen: '%s' / client '%s': addresses expected", a->w[2],
			     a->w[4]);
		return;
	}
	if (secret_ok("radius dae listen", a->w[6]) < 0)
		return;
	/* the listener once; each further line adds a client */
	if (!egw_radius_dae_addr(r, &s_addr)) {
		rc = egw_radius_stage_dae_listen(&la);
		if (rc < 0) {
			egw_cli_fail("radius dae listen %s: %s", a->w[2], strerror(-rc));
			return;
		}
	} else if (!radius_same_addr(&s_addr, &la)) {
		egw_cli_fail("radius dae listen %s: already listening elsewhere", a->w[2]);
		return;
	}
	rc = egw_radius_dae_client_add(r, &ca, (const uint8_t *)a->w[6], strlen(a->w[6]));
	if (rc == -EEXIST) {
		egw_cli_fail("radius dae: client %s exists", a->w[4]);
		return;
	}
	if (rc < 0) {
		egw_cli_fail("radius dae client %s: %s", a->w[4], strerror(-rc));
		return;
	}
	egw_radius_dae_addr(r, &la);
	egw_radius_addr_str(&la, s, sizeof(s));
	printf("radius: dynamic authorisation on %s, client %s\n", s, a->w[4]);
}

static void
radius_run(char *line)
{
	struct egw_radius *r = egw_radius_stage_client();
	struct radius_args a;
	uint64_t v;
	int rc;

	a.n = egw_cli_split(line, a.w, RADIUS_MAX_WORDS);
	if (a.n <= 0) {
		egw_cli_fail("radius: see 'help radius'%s", a.n < 0 ? " (too many words)" : "");
		return;
	}
	if (strcmp(a.w[0], "server") == 0 && a.n >= 2) {
		server_cmd(&a, r);
	} else if (strcmp(a.w[0], "dae") == 0) {
		dae_cmd(&a, r);
	} else if (strcmp(a.w[0], "nas-identifier") == 0 && a.n == 2) {
		if (strlen(a.w[1]) > EGW_RADIUS_STR_MAX) {
			egw_cli_fail("radius nas-identifier: at most %u characters",
				     EGW_RADIUS_STR_MAX);
			return;
		}
		egw_radius_stage_set_nas_id(a.w[1]);
		printf("radius: nas-identifier %s\n", a.w[1]);
	} else if (strcmp(a.w[0], "nas-ip") == 0 && a.n == 2) {
		struct sockaddr_storage sa;

		if (strchr(a.w[1], '[') != NULL ||
		    (strchr(a.w[1], ':') != NULL && strchr(a.w[1], '.') != NULL) ||
		    egw_radius_addr_parse(a.w[1], 0, &sa) < 0) {
			egw_cli_fail("radius nas-ip: '%s': an IPv4 or IPv6 address", a.w[1]);
			return;
		}
		egw_radius_stage_set_nas_ip(&sa);
		printf("radius: nas-ip %s\n", a.w[1]);
	} else if (strcmp(a.w[0], "interim") == 0 && a.n == 2) {
		if (num("radius interim", "seconds", a.w[1], 0, 86400, &v) < 0)
			return;
		egw_radius_stage_set_interim((unsigned int)v);
		printf("radius: interim updates %s%s\n", v == 0 ? "off" : a.w[1],
		       v == 0 ? "" : " s (unless the server says otherwise)");
	} else if (strcmp(a.w[0], "dead-time") == 0 && a.n == 2) {
		if (num("radius dead-time", "seconds", a.w[1], 1, 3600, &v) < 0)
			return;
		egw_radius_set_dead_time(r, (unsigned int)v);
		printf("radius: a server that stops answering is passed over for %s s\n", a.w[1]);
	} else if (strcmp(a.w[0], "max-outstanding") == 0 && a.n == 2) {
		if (num("radius max-outstanding", "requests", a.w[1], 1, EGW_RADIUS_MAX_OUTSTANDING,
			&v) < 0)
			return;
		rc = egw_radius_set_max_outstanding(r, (unsigned int)v);
		if (rc < 0)
			egw_cli_fail("radius max-outstanding %s: %s (more are in flight?)", a.w[1],
				     strerror(-rc));
		else
			printf("radius: at most %s requests outstanding\n", a.w[1]);
	} else {
		egw_cli_fail("radius: unknown or incomplete '%s' (server, nas-identifier, nas-ip, "
			     "interim, dead-time, max-outstanding, dae)",
			     a.w[0]);
	}
}

struct radius_res {
	cmdline_fixed_string_t w0;
	cmdline_fixed_string_t w1;
	cmdline_multi_string_t rest;
};

static void
cmd_radius(void *pr, struct cmdline *cl, void *data __rte_unused)
{
	struct radius_res *res = pr;
	char line[sizeof(res->rest)];

	snprintf(line, sizeof(line), "%s", res->rest);
	explicit_bzero(res->rest, sizeof(res->rest));
	egw_cli_secret();
	if (egw_cli_line_has_hash(cl)) {
		egw_cli_fail("radius: '#' starts a comment: secrets cannot contain it, and a "
			     "radius line cannot end in a comment");
		explicit_bzero(line, sizeof(line));
		return;
	}
	rte_spinlock_lock(&egw.ctrl_lock);
	if (!egw.radius)
		egw_cli_fail("radius: not initialised");
	else
		radius_run(line);
	rte_spinlock_unlock(&egw.ctrl_lock);
	explicit_bzero(line, sizeof(line));
}

/* ---- show radius ---------------------------------------------------------- */

static void
show_server(const struct egw_radius_server_info *s, void *arg)
{
	char a[INET6_ADDRSTRLEN + 8];

	(void)arg;
	egw_radius_addr_str(&s->addr, a, sizeof(a));
	printf("  %-24s acct %-5u prio %-4u timeout %-5u retries %-2u %s", a, s->acct_port,
	       s->priority, s->timeout_ms, s->retries, s->dead ? "dead" : "alive");
	if (s->dead)
		printf(" (%u s left)", s->dead_left_s);
	printf("\n    requests %" PRIu64 " retransmits %" PRIu64 " timeouts %" PRIu64
	       " responses %" PRIu64 " bad-authenticator %" PRIu64 " marked-dead %" PRIu64 "\n",
	       s->requests, s->retransmits, s->timeouts, s->responses, s->bad_auth, s->dead_count);
}

static void
show_counter(const char *name, uint64_t v, void *arg)
{
	(void)arg;
	printf("    %-24s %" PRIu64 "\n", name, v);
}

static void
show_dae_client(const struct sockaddr_storage *a, void *arg)
{
	char s[INET6_ADDRSTRLEN + 8];

	(void)arg;
	egw_radius_addr_str(a, s, sizeof(s));
	*strrchr(s, ':') = '\0';
	printf("  dae client %s\n", s);
}

static void
cmd_show_radius(void *pr, struct cmdline *cl __rte_unused, void *data)
{
	struct radius_res *res = pr;
	struct egw_radius *r;
	const char *what = data != NULL ? res->rest : "";

	while (*what == ' ')
		what++;
	if (what[0] != '\0' && strcmp(what, "servers") != 0 && strcmp(what, "stats") != 0) {
		egw_cli_fail("show radius: '%s': servers or stats", what);
		return;
	}
	rte_spinlock_lock(&egw.ctrl_lock);
	r = egw_radius_stage_client();
	if (!egw.radius || r == NULL) {
		egw_cli_fail("show radius: RADIUS not available");
	} else if (strcmp(what, "stats") == 0) {
		printf("  RADIUS counters:\n");
		egw_radius_stage_counters(show_counter, NULL);
	} else {
		if (what[0] == '\0')
			egw_radius_stage_config(stdout, false);
		if (egw_radius_server_count(r) == 0)
			printf("  (no server)\n");
		egw_radius_servers_walk(r, show_server, NULL);
		if (what[0] == '\0')
			egw_radius_dae_clients_walk(r, show_dae_client, NULL);
	}
	rte_spinlock_unlock(&egw.ctrl_lock);
}

/* ---- --stats-json ------------------------------------------------------------ */

struct json_w {
	FILE *f;
	bool first;
};

static void
json_counter(const char *name, uint64_t v, void *arg)
{
	struct json_w *j = arg;

	fprintf(j->f, "%s\"%s\": %" PRIu64, j->first ? "" : ", ", name, v);
	j->first = false;
}

static void
json_server(const struct egw_radius_server_info *s, void *arg)
{
	struct json_w *j = arg;
	char a[INET6_ADDRSTRLEN + 8];

	egw_radius_addr_str(&s->addr, a, sizeof(a));
	fprintf(j->f,
		"%s{\"addr\": \"%s\", \"acct_port\": %u, \"priority\": %u, \"timeout_ms\": %u, "
		"\"retries\": %u, \"dead\": %s, \"requests\": %" PRIu64
		", \"retransmits\": %" PRIu64 ", \"timeouts\": %" PRIu64 ", \"responses\": %" PRIu64
		", \"bad_authenticator\": %" PRIu64 ", \"marked_dead\": %" PRIu64 "}",
		j->first ? "" : ", ", a, s->acct_port, s->priority, s->timeout_ms, s->retries,
		s->dead ? "true" : "false", s->requests, s->retransmits, s->timeouts, s->responses,
		s->bad_auth, s->dead_count);
	j->first = false;
}

void
egw_radius_stage_json(FILE *f)
{
	struct json_w j = {.f = f, .first = true};
	struct egw_radius *r;

	rte_spinlock_lock(&egw.ctrl_lock);
	r = egw_radius_stage_client();
	if (!egw.radius || r == NULL) {
		fprintf(f, "{\"available\": false}");
		rte_spinlock_unlock(&egw.ctrl_lock);
		return;
	}
	fprintf(f, "{\"available\": true,\n    \"config\": {");
	egw_radius_stage_config(f, true);
	fprintf(f, "},\n    \"servers\": [");
	egw_radius_servers_walk(r, json_server, &j);
	fprintf(f, "],\n    \"counters\": {");
	j.first = true;
	egw_radius_stage_counters(json_counter, &j);
	fprintf(f, "}}");
	rte_spinlock_unlock(&egw.ctrl_lock);
}

static cmdline_parse_token_string_t t_radius0 =
	TOKEN_STRING_INITIALIZER(struct radius_res, w0, "radius");
static cmdline_parse_token_string_t t_show0 =
	TOKEN_STRING_INITIALIZER(struct radius_res, w0, "show");
static cmdline_parse_token_string_t t_radius1 =
	TOKEN_STRING_INITIALIZER(struct radius_res, w1, "radius");
static cmdline_parse_token_string_t t_rest =
	TOKEN_STRING_INITIALIZER(struct radius_res, rest, TOKEN_STRING_MULTI);

cmdline_parse_inst_t egw_cli_radius = {
	.f = cmd_radius,
	.help_str = "radius server|nas-identifier|nas-ip|interim|dead-time|max-outstanding|dae "
		    "...: RADIUS AAA (help radius)",
	.tokens = {(void *)&t_radius0, (void *)&t_rest, NULL},
};

cmdline_parse_inst_t egw_cli_show_radius = {
	.f = cmd_show_radius,
	.help_str = "show radius [servers|stats]",
	.tokens = {(void *)&t_show0, (void *)&t_radius1, NULL},
};

cmdline_parse_inst_t egw_cli_show_radius_what = {
	.f = cmd_show_radius,
	.data = (void *)1,
	.help_str = "show radius [servers|stats]",
	.tokens = {(void *)&t_show0, (void *)&t_radius1, (void *)&t_rest, NULL},
};
