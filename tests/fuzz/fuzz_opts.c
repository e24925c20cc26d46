/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the application option parser (app/edgegw/options.c,
 * egw_opts_parse()); no EAL.
 *
 * Input layout:
 *   byte 0     errlen - 2 (2..257): the error buffer is malloc'd at exactly
 *              that size, so ASan sees a message written past it
 *   bytes 1-   the arguments after argv[0], split at NUL or newline, at most
 *              MAX_ARGS of them (the rest of the input is the last one)
 *
 * Checked:
 *  - the result is 0, 1 (help) or -EINVAL;
 *  - on -EINVAL the message is non-empty and NUL-terminated inside errlen;
 *  - on 0 every numeric field is its default or inside the bounds of
 *    options.c's num_opts table, idle_exit_set says whether --idle-exit was
 *    given a value, and the string options point into the argument strings;
 *  - a second parse of a fresh copy of the same argv gives the same result
 *    and the same options (the parser resets getopt itself).
 * -h prints the usage text to stdout: the meson test closes stdout
 * (-close_fd_mask=1).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_ARGS 24

/* argv[0] and the arguments, each a NUL-terminated copy in one allocation. */
struct args {
	int argc;
	char *argv[MAX_ARGS + 2];
	char *strings;
	size_t len;
};

static void
args_make(struct args *a, const uint8_t *p, size_t n)
{
	char *s;
	size_t i, start = 0;

	/* "edgegw\0" + the bytes + a final NUL */
	a->len = 7 + n + 1;
	a->strings = malloc(a->len);
	FUZZ_ASSERT(a->strings != NULL, "malloc");
	memcpy(a->strings, "edgegw", 7);
	memcpy(a->strings + 7, p, n);
	a->strings[7 + n] = '\0';
	s = a->strings + 7;
	a->argc = 1;
	a->argv[0] = a->strings;
	if (n != 0) {
		for (i = 0; i < n && a->argc < MAX_ARGS; i++) {
			if (s[i] == '\0' || s[i] == '\n') {
				s[i] = '\0';
				a->argv[a->argc++] = s + start;
				start = i + 1;
			}
		}
		/* what is left is the last argument */
		a->argv[a->argc++] = s + start;
	}
	a->argv[a->argc] = NULL;
}

static bool
in_strings(const struct args *a, const char *s)
{
	return s >= a->strings && s < a->strings + a->len;
}

static void
check_ok(const struct args *a, const struct egw_opts *o)
{
	FUZZ_ASSERT(o->stats_period == 0 || (o->stats_period >= 1 && o->stats_period <= 86400),
		    "stats_period %u", o->stats_period);
	if (o->idle_exit_set)
		FUZZ_ASSERT(o->idle_exit_ms >= 1 && o->idle_exit_ms <= 86400000,
			    "idle_exit_ms %llu", (unsigned long long)o->idle_exit_ms);
	else
		FUZZ_ASSERT(o->idle_exit_ms == 0, "idle_exit_ms %llu without --idle-exit",
			    (unsigned long long)o->idle_exit_ms);
	FUZZ_ASSERT(o->rxq <= 16, "rxq %u", o->rxq);
	FUZZ_ASSERT(o->txq <= 128, "txq %u", o->txq);
	FUZZ_ASSERT(o->burst >= 1 && o->burst <= 128, "burst %u", o->burst);
	FUZZ_ASSERT(o->mbufs >= 1024 && o->mbufs <= 16777216, "mbufs %u", o->mbufs);
	FUZZ_ASSERT(o->rxd >= 32 && o->rxd <= 32768, "rxd %u", o->rxd);
	FUZZ_ASSERT(o->txd >= 32 && o->txd <= 32768, "txd %u", o->txd);
	FUZZ_ASSERT(o->control_lcore >= -1 && o->control_lcore <= 1023, "control_lcore %d",
		    o->control_lcore);
	FUZZ_ASSERT(o->cmdline_file == NULL ||
			    (in_strings(a, o->cmdline_file) && o->cmdline_file[0] != '\0'),
		    "cmdline_file");
	FUZZ_ASSERT(o->stats_json == NULL ||
			    (in_strings(a, o->stats_json) && o->stats_json[0] != '\0'),
		    "stats_json");
	FUZZ_ASSERT(o->forward_mode == NULL || in_strings(a, o->forward_mode), "forward_mode");
}

/* The options as values: pointers become offsets into the argument strings. */
static void
flatten(const struct args *a, const struct egw_opts *o, struct egw_opts *flat)
{
	*flat = *o;
	flat->cmdline_file =
		o->cmdline_file != NULL ? (const char *)(o->cmdline_file - a->strings + 1) : NULL;
	flat->stats_json =
		o->stats_json != NULL ? (const char *)(o->stats_json - a->strings + 1) : NULL;
	flat->forward_mode =
		o->forward_mode != NULL ? (const char *)(o->forward_mode - a->strings + 1) : NULL;
}

static bool
same_opts(const struct egw_opts *x, const struct egw_opts *y)
{
	return x->interactive == y->interactive && x->auto_start == y->auto_start &&
	       x->cmdline_file == y->cmdline_file && x->stats_period == y->stats_period &&
	       x->idle_exit_set == y->idle_exit_set && x->idle_exit_ms == y->idle_exit_ms &&
	       x->stats_json == y->stats_json && x->rxq == y->rxq && x->txq == y->txq &&
	       x->burst == y->burst && x->mbufs == y->mbufs && x->rxd == y->rxd &&
	       x->txd == y->txd && x->control_lcore == y->control_lcore &&
	       x->forward_mode == y->forward_mode;
}

static int
parse_once(const uint8_t *p, size_t n, size_t errlen, struct egw_opts *flat, char *msg,
	   size_t msglen)
{
	struct egw_opts o;
	struct args a;
	char *err = malloc(errlen);
	int rc;

	FUZZ_ASSERT(err != NULL, "malloc");
	memset(err, 0xa5, errlen);
	args_make(&a, p, n);
	rc = egw_opts_parse(a.argc, a.argv, &o, err, errlen);
	FUZZ_ASSERT(rc == 0 || rc == 1 || rc == -EINVAL, "egw_opts_parse returned %d", rc);
	msg[0] = '\0';
	if (rc == -EINVAL) {
		FUZZ_ASSERT(memchr(err, '\0', errlen) != NULL, "message not NUL-terminated");
		FUZZ_ASSERT(err[0] != '\0', "empty message");
		snprintf(msg, msglen, "%s", err);
	}
	if (rc == 0) {
		check_ok(&a, &o);
		flatten(&a, &o, flat);
	}
	free(err);
	free(a.strings);
	return rc;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct egw_opts o1, o2;
	char m1[300], m2[300];
	size_t errlen;
	int rc1, rc2;

	if (size < 1)
		return 0;
	errlen = (size_t)data[0] + 2;
	rc1 = parse_once(data + 1, size - 1, errlen, &o1, m1, sizeof(m1));
	rc2 = parse_once(data + 1, size - 1, errlen, &o2, m2, sizeof(m2));
	FUZZ_ASSERT(rc1 == rc2, "second parse: %d, first %d", rc2, rc1);
	FUZZ_ASSERT(strcmp(m1, m2) == 0, "second parse: message '%s', first '%s'", m2, m1);
	if (rc1 == 0)
		FUZZ_ASSERT(same_opts(&o1, &o2), "second parse gave other options");
	return 0;
}
