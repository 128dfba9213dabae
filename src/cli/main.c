/* SPDX-License-Identifier: Apache-2.0 */
/*
 * main.c - the command line: picks a subcommand, runs the pipeline stages it needs,
 * prints the one-line error of whatever failed and turns it into an exit status.
 *
 * Exit status: 0 success, 1 bad input (a file that cannot be read or is not what it
 * should be), 2 usage error, 3 out of memory or an output that cannot be written.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "inputs.h"
#include "outputs.h"
#include "heapref/core.h"
#include "heapref/dump.h"
#include "heapref/writers.h"
#include "stats.h"
#include "heapref/binary.h"
/* HEAPREF_VERSION, HEAPREF_COMMIT, HEAPREF_BUILD: written at build time (cmake/build_info.cmake). */
#include "build_info.h"


/*
 * Opens the heap input (a dump, or a core with its binary before it); with stats,
 * reports how long reading and indexing took and what it holds. *bin is the binary
 * when one was given; the caller frees both.
 */
static struct hr_dump *open_dump(const char *binary, const char *path, struct stats *stats,
				 struct hr_binary **bin, struct hr_error *err)
{
	struct hr_dump *dump = NULL;

	if (open_heap_input(&(struct heap_input){ .binary = binary, .input = path }, bin, &dump,
			    err)) {
		hr_dump_free(dump);
		return NULL;
	}
	if (stats) {
		stats_mark(stats, "read+index", stderr);
		fprintf(stderr, "stats: %.0f MB, %zu objects; index %.1f MB (%.1f bytes per object)\n",
			(double)hr_dump_file_size(dump) / 1e6, hr_dump_object_count(dump),
			(double)hr_dump_index_bytes(dump) / 1e6,
			hr_dump_object_count(dump)
				? (double)hr_dump_index_bytes(dump) / (double)hr_dump_object_count(dump)
				: 0.0);
		stats_reading(stats, dump, stderr);
	}
	return dump;
}

/* Whether the operands start with a binary (an ELF file that is not a core). */
static bool starts_with_binary(int argc, char **argv)
{
	return argc > 1 && hr_input_kind_of(argv[0]) == HR_INPUT_ELF;
}

static int cmd_info(int argc, char **argv)
{
	struct hr_error err = { 0 };
	struct stats *stats = NULL;
	struct hr_binary *bin = NULL;
	struct hr_dump *dump;
	bool want_stats = false;
	const struct cli_opt opts[] = { { "--stats", NULL, &want_stats, NULL } };
	int rc = cli_parse("info", argc, argv, opts, 1, &argc);

	if (rc)
		return rc == CLI_HELP ? ST_OK : rc;
	if (argc != 1 && !(argc == 2 && starts_with_binary(argc, argv)))
		return cli_usage_error("info", "info takes the heap dump, or the binary and its core");
	if (want_stats)
		stats = stats_start();
	dump = open_dump(argc == 2 ? argv[0] : NULL, argv[argc - 1], stats, &bin, &err);
	if (!dump) {
		stats_stop(stats);
		hr_binary_free(bin);
		return cli_report(&err);
	}
	rc = hr_write_dump_info(stdout, dump, &err);
	stats_mark(stats, "summary", stderr);
	stats_stop(stats);
	hr_dump_free(dump);
	hr_binary_free(bin);
	if (rc) {
		fprintf(stderr, "heapref: standard output: %s\n", err.msg);
		return ST_RESOURCES;
	}
	return ST_OK;
}

static int cmd_object(int argc, char **argv)
{
	struct hr_error err = { 0 };
	struct hr_binary *bin = NULL;
	struct hr_dump *dump;
	uint64_t addr;
	int i, first, rc = cli_parse("object", argc, argv, NULL, 0, &argc);

	if (rc)
		return rc == CLI_HELP ? ST_OK : rc;
	first = starts_with_binary(argc, argv) ? 2 : 1; /* [BINARY] DUMP|CORE ADDRESS... */
	if (argc < first + 1)
		return cli_usage_error("object", "object takes a heap dump (or a binary and its "
				       "core) and one or more addresses");
	for (i = first; i < argc; i++)
		if (!cli_parse_address(argv[i], &addr))
			return cli_usage_error("object", "not an address: %s (addresses are numbers, "
					       "like 0xc000012340)", argv[i]);
	dump = open_dump(first == 2 ? argv[0] : NULL, argv[first - 1], NULL, &bin, &err);
	if (!dump) {
		hr_binary_free(bin);
		return cli_report(&err);
	}
	for (i = first; i < argc && !rc; i++) {
		cli_parse_address(argv[i], &addr);
		rc = hr_write_object_at(stdout, dump, addr, 64, &err);
	}
	hr_dump_free(dump);
	hr_binary_free(bin);
	if (rc) {
		fprintf(stderr, "heapref: standard output: %s\n", err.msg);
		return ST_RESOURCES;
	}
	return ST_OK;
}

/* heapref help [COMMAND], heapref --help */
static int cmd_help(int argc, char **argv)
{
	int rc = cli_parse("help", argc, argv, NULL, 0, &argc);

	if (rc)
		return rc == CLI_HELP ? ST_OK : rc;
	if (argc > 1)
		return cli_usage_error("help", "help takes one command");
	if (argc == 1 && !cli_usage(argv[0]))
		return cli_usage_error(NULL, "unknown command %s", argv[0]);
	fputs(cli_usage(argc ? argv[0] : NULL), stdout);
	return ST_OK;
}

static int cmd_version(int argc, char **argv)
{
	int rc = cli_parse("version", argc, argv, NULL, 0, &argc);

	if (rc)
		return rc == CLI_HELP ? ST_OK : rc;
	if (argc)
		return cli_usage_error("version", "version takes no arguments");
	/* What a bug report needs: which source, built how, with which libraries. */
	printf("heapref %s\ncommit %s\nbuilt %s\nlibraries libdwarf %s, %s\n", HEAPREF_VERSION,
	       HEAPREF_COMMIT, HEAPREF_BUILD, hr_binary_libdwarf_version(), HEAPREF_LIBRARIES);
	return ST_OK;
}

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
} commands[] = {
	{ "analyze", cmd_analyze }, { "why", cmd_why },	    { "retained", cmd_retained },
	{ "diff", cmd_diff },	    { "allocs", cmd_allocs },	{ "goroutines", cmd_goroutines },
	{ "suspects", cmd_suspects },
	{ "info", cmd_info },
	{ "hprof", cmd_hprof },
	{ "object", cmd_object },   { "types", cmd_types }, { "vars", cmd_vars },
	{ "help", cmd_help },	    { "version", cmd_version },
};

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : NULL;

	outputs_catch_signals();
	if (!cmd) {
		fprintf(stderr, "heapref: no command given\n%s", cli_usage(NULL));
		return ST_USAGE;
	}
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h"))
		return cmd_help(argc - 2, argv + 2);
	if (!strcmp(cmd, "--version"))
		return cmd_version(argc - 2, argv + 2);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(cmd, commands[i].name))
			return commands[i].run(argc - 2, argv + 2);
	if (cmd[0] == '-')
		return cli_usage_error(NULL, "unknown option %s", cmd);
	return cli_usage_error(NULL, "unknown command %s", cmd);
}
