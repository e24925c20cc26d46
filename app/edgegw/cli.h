/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef EGW_CLI_H
#define EGW_CLI_H

/** One line of "help": the docs (docs/usage.md) carry each syntax verbatim. */
struct egw_cli_help {
	const char *topic;
	const char *syntax;
	const char *text;
};

/** The help table, terminated by an entry with a NULL topic. */
extern const struct egw_cli_help egw_cli_help_table[];

#endif /* EGW_CLI_H */
