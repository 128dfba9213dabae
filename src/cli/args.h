/*
 * args.h - the command line's shared conventions: options before or after the operands
 * (as git and GNU tools allow), `--` to end them, -h/--help on every command, and usage
 * errors as one line that echoes what was wrong and points at the command's --help.
 */
#ifndef HEAPREF_CLI_ARGS_H
#define HEAPREF_CLI_ARGS_H

#include <stdbool.h>

#include "heapref/base.h"

enum { CLI_OK = 0, CLI_USAGE = 2, CLI_HELP = -1 /* the usage was asked for and shown */ };

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

/* Prints "heapref: WHAT (see heapref CMD --help)" on stderr; returns CLI_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) HR_PRINTF(2, 3);

/* The --help text of a command ("analyze"), of heapref itself (NULL); NULL if no such command. */
const char *cli_usage(const char *cmd);

#endif
