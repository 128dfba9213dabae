/* SPDX-License-Identifier: Apache-2.0 */
/*
 * args.h - the command line's shared conventions: options before or after the operands
 * (as git and GNU tools allow), `--` to end them, -h/--help on every command, and usage
 * errors as one line that echoes what was wrong and points at the command's --help.
 */
#ifndef HEAPREF_CLI_ARGS_H
#define HEAPREF_CLI_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "heapref/base.h"

enum { CLI_OK = 0, CLI_USAGE = 2, CLI_HELP = -1 /* the usage was asked for and shown */ };

/* The exit statuses of every command (docs/cli.md, "Exit status"). */
enum cli_status {
	ST_OK = 0,
	ST_INPUT = 1,     /* bad input: cannot be read, not well formed, not what it should be */
	ST_USAGE = 2,     /* usage error, and an output that would overwrite an input */
	ST_RESOURCES = 3, /* out of memory, or an output that cannot be written */
	ST_MISMATCH = 4,  /* the heap input was not written by the binary (--force: analyse) */
};

/* The exit status of a failure, from its code (HR_EIO is an input's: outputs use HR_EOUTPUT). */
int cli_status_of(const struct hr_error *err);
/* Prints err as the one line "heapref: ..." on stderr; returns cli_status_of(err). */
int cli_report(const struct hr_error *err);

/* One option: sets *flag, or stores its value (the next argument, or after '=') in *value. */
struct cli_opt {
	const char *name;  /* "--stats" */
	const char *alias; /* "-o", or NULL */
	bool *flag;        /* for an option without a value */
	const char **value; /* for an option with one */
};

/*
 * Parses the arguments after command cmd: sets the options of opts (nopts entries) and
 * moves the operands, in order, to the front of argv, *noperands of them. Returns CLI_OK,
 * CLI_HELP after printing cmd's usage on stdout (-h, --help), or CLI_USAGE after printing
 * the one-line error (an unknown option, a missing value).
 */
int cli_parse(const char *cmd, int argc, char **argv, const struct cli_opt *opts, int nopts,
	      int *noperands);

/* An address: a number in C's notation (0xc000012340, or decimal); false if text is not one. */
bool cli_parse_address(const char *text, uint64_t *addr);

/* Prints "heapref: WHAT (see heapref CMD --help)" on stderr; returns CLI_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) HR_PRINTF(2, 3);

/* The --help text of a command ("analyze"), of heapref itself (NULL); NULL if no such command. */
const char *cli_usage(const char *cmd);
/* The name of the i-th command that has a --help text ("analyze"); NULL past the last. */
const char *cli_command_name(size_t i);

#endif
