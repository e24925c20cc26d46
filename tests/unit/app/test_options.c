/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Option parser: every option, its bounds, and bad input. No EAL needed.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "options.h"
#include "check.h"

#define MAX_ARGS 16

static int
parse(struct egw_opts *o, char *err, size_t errlen, const char *const args[])
{
	char *argv[MAX_ARGS + 2];
	static char store[MAX_ARGS][128]; /* parsed options point into it */
	int argc = 0;

	argv[argc++] = (char *)"edgegw";
	for (; args[argc - 1] != NULL && argc <= MAX_ARGS; argc++) {
		snprintf(store[argc - 1], sizeof(store[0]), "%s", args[argc - 1]);
		argv[argc] = store[argc - 1];
	}
	argv[argc] = NULL;
	err[0] = '\0';
	return egw_opts_parse(argc, argv, o, err, errlen);
}

struct bad_case {
	const char *args[6];
	const char *err_has; /* the message must name this */
};

static const struct bad_case bad[] = {
	{{"--burst", "0", NULL}, "--burst"},
	{{"--no-rx-hold=1", NULL}, "'--no-rx-hold' takes no value"},
	{{"--interactive=yes", NULL}, "'--interactive' takes no value"},
	{{"--burst", "129", NULL}, "out of range"},
	{{"--burst", "-1", NULL}, "not a number"},
	{{"--burst", "32x", NULL}, "not a number"},
	{{"--burst", "", NULL}, "not a number"},
	{{"--rxq", "abc", NULL}, "--rxq"},
	{{"--rxq", "17", NULL}, "out of range"},
	{{"--txq", "0", NULL}, "--txq"},
	{{"--mbufs", "10", NULL}, "--mbufs"},
	{{"--mbufs", "99999999999999999999999", NULL}, "out of range"},
	{{"--stats-period", "0", NULL}, "--stats-period"},
	{{"--idle-exit", NULL}, "needs a value"},
	{{"--idle-exit", "1.5", NULL}, "--idle-exit"},
	{{"--nosuch", NULL}, "--nosuch"},
	{{"-z", NULL}, "-z"},
	{{"stray", NULL}, "stray"},
	{{"--cmdline-file", "", NULL}, "--cmdline-file"},
	{{"--stats-json", "", NULL}, "--stats-json"},
	{{"--rxd", "16", NULL}, "--rxd"},
	{{"--control-lcore", "x", NULL}, "--control-lcore"},
	{{"--pppoe-sessions", "0", NULL}, "--pppoe-sessions"},
	{{"--pppoe-sessions", "65535", NULL}, "out of range"},
	{{"--pppoe-sessions", NULL}, "needs a value"},
};

int
main(void)
{
	struct egw_opts o;
	char err[256];
	unsigned int i;
	uint64_t v;

	/* defaults */
	{
		const char *const a[] = {NULL};

		CHECK(parse(&o, err, sizeof(err), a) == 0, "empty: %s", err);
		CHECK(o.burst == EGW_DEF_BURST && o.mbufs == EGW_DEF_MBUFS, "defaults");
		CHECK(!o.interactive && !o.auto_start && !o.idle_exit_set, "default flags");
		CHECK(o.control_lcore == -1 && o.rxq == 0 && o.txq == 0, "default queues");
		CHECK(o.pppoe_sessions == 0, "default PPPoE table: the maximum");
	}
	/* every option */
	{
		const char *const a[] = {"-i",
					 "-a",
					 "--cmdline-file",
					 "f.cmd",
					 "--stats-period",
					 "5",
					 "--idle-exit",
					 "250",
					 "--stats-json",
					 "s.json",
					 "--rxq",
					 "2",
					 "--txq",
					 "3",
					 NULL};

		CHECK(parse(&o, err, sizeof(err), a) == 0, "all: %s", err);
		CHECK(o.interactive && o.auto_start, "-i -a");
		CHECK(strcmp(o.cmdline_file, "f.cmd") == 0, "cmdline-file");
		CHECK(o.stats_period == 5, "stats-period %u", o.stats_period);
		CHECK(o.idle_exit_set && o.idle_exit_ms == 250, "idle-exit");
		CHECK(strcmp(o.stats_json, "s.json") == 0, "stats-json");
		CHECK(o.rxq == 2 && o.txq == 3, "rxq/txq %u/%u", o.rxq, o.txq);
	}
	{
		const char *const a[] = {"--burst=64",
					 "--mbufs",
					 "8192",
					 "--rxd",
					 "512",
					 "--txd",
					 "2048",
					 "--control-lcore",
					 "1",
					 "--forward-mode",
					 "mac",
					 "--interactive",
					 "--auto-start",
					 "--pppoe-sessions",
					 "1000",
					 NULL};

		CHECK(parse(&o, err, sizeof(err), a) == 0, "more: %s", err);
		CHECK(o.burst == 64 && o.mbufs == 8192, "burst/mbufs");
		CHECK(o.rxd == 512 && o.txd == 2048, "rxd/txd");
		CHECK(o.control_lcore == 1, "control-lcore");
		CHECK(strcmp(o.forward_mode, "mac") == 0, "forward-mode");
		CHECK(o.interactive && o.auto_start, "long flags");
		CHECK(o.pppoe_sessions == 1000, "pppoe-sessions %u", o.pppoe_sessions);
	}
	/* bounds are inclusive */
	{
		const char *const a[] = {"--burst",          "128",   "--rxq", "16",
					 "--pppoe-sessions", "65534", NULL};

		CHECK(parse(&o, err, sizeof(err), a) == 0 && o.burst == 128 && o.rxq == 16 &&
			      o.pppoe_sessions == 65534,
		      "upper bounds: %s", err);
	}
	/* a second parse starts from defaults (getopt state reset) */
	{
		const char *const a[] = {"--burst", "8", "--no-rx-hold", NULL};
		const char *const b[] = {NULL};

		CHECK(parse(&o, err, sizeof(err), a) == 0 && o.burst == 8 && o.no_rx_hold,
		      "burst 8, no rx hold");
		CHECK(parse(&o, err, sizeof(err), b) == 0 && o.burst == EGW_DEF_BURST &&
			      !o.no_rx_hold,
		      "reparse resets");
	}
	/* help */
	{
		const char *const a[] = {"-h", NULL};

		CHECK(parse(&o, err, sizeof(err), a) == 1, "-h returns 1");
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = parse(&o, err, sizeof(err), bad[i].args);

		CHECK(rc == -EINVAL, "bad case %u (%s): rc %d", i, bad[i].args[0], rc);
		CHECK(strstr(err, bad[i].err_has) != NULL, "bad case %u: message '%s' lacks '%s'",
		      i, err, bad[i].err_has);
	}
	/* the number parser itself */
	CHECK(egw_parse_u64("0", 0, 10, &v) == 0 && v == 0, "u64 0");
	CHECK(egw_parse_u64("18446744073709551615", 0, UINT64_MAX, &v) == 0 && v == UINT64_MAX,
	      "u64 max");
	CHECK(egw_parse_u64("18446744073709551616", 0, UINT64_MAX, &v) == -ERANGE, "u64 overflow");
	CHECK(egw_parse_u64(" 1", 0, 10, &v) == -EINVAL, "leading space");
	CHECK(egw_parse_u64("+1", 0, 10, &v) == -EINVAL, "plus sign");
	CHECK(egw_parse_u64("0x10", 0, 100, &v) == -EINVAL, "hex");
	CHECK(egw_parse_u64(NULL, 0, 10, &v) == -EINVAL, "NULL");
	CHECK(egw_parse_u64("11", 0, 10, &v) == -ERANGE, "above max");
	CHECK(egw_parse_u64("4", 5, 10, &v) == -ERANGE, "below min");

	printf("%d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
