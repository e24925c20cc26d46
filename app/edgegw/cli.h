/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef EGW_CLI_H
#define EGW_CLI_H

#include <stdbool.h>

struct cmdline;

/** One line of "help": the docs (docs/usage.md) carry each syntax verbatim. */
struct egw_cli_help {
	const char *topic;
	const char *syntax;
	const char *text;
};

/** The help table, terminated by an entry with a NULL topic. */
extern const struct egw_cli_help egw_cli_help_table[];

/** Report a failed command ("FILE:LINE: error: ..." in a command file) and
 *  set the status the line returns. */
void egw_cli_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/** The command being run carried key material: the interactive prompt
 *  drops its history after the line. */
void egw_cli_secret(void);
/**
 * True if the line being run contains a '#': the parser ends a line at a
 * '#' (a comment), so a command whose arguments are names or secrets
 * refuses such a line instead of silently using what precedes the '#'.
 */
bool egw_cli_line_has_hash(struct cmdline *cl);

/**
 * Split s in place into words separated by spaces and tabs.
 * @return the number of words (at most max), or -E2BIG if there are more.
 */
int egw_cli_split(char *s, char **w, int max);

#endif /* EGW_CLI_H */
