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

#include "commands.h"
#include "heapref/dump.h"
#include "heapref/writers.h"
#include "stats.h"

#define HEAPREF_VERSION "0.1.0"

enum exit_status { EXIT_OK = 0, EXIT_BAD_INPUT = 1, EXIT_USAGE = 2, EXIT_RESOURCES = 3,
		   EXIT_MISMATCH = 4 };

static const char usage[] =
	"usage: heapref <command> [arguments]\n"
	"\n"
	"Find out which variables keep a Go program's memory alive, from a heap dump\n"
	"(runtime/debug.WriteHeapDump) and the binary that wrote it.\n"
	"\n"
	"commands:\n"
	"  analyze [-o FILE] [--text] [--full-chains] [--max-depth N] [--stats] [--force]\n"
	"          BINARY DUMP\n"
	"                write a pprof profile (default heapref.pb.gz) whose stacks are\n"
	"                reference chains from root variables to the memory they keep\n"
	"                alive; view it with go tool pprof -top / -traces / -http=:8080;\n"
	"                --text: the chains as a condensed report (analyze --help)\n"
	"  why [-n K] [--full-chains] [--max-depth N] [--force] BINARY DUMP ADDRESS|TYPE...\n"
	"                why the heap object at each address (or the biggest of a type)\n"
	"                is alive: its chain and up to K independent paths from roots\n"
	"  retained [--format text|tsv] [-n N] [--force] BINARY DUMP\n"
	"                the root variables and objects by retained size: what would be\n"
	"                freed if each let go (the dominator tree of the object graph)\n"
	"  diff [-o FILE | --text] [options of analyze] OLD_BINARY OLD_DUMP NEW_BINARY NEW_DUMP\n"
	"                how each chain grew between two dumps: a pprof profile (as\n"
	"                -diff_base makes) or a table, biggest growth first (diff --help)\n"
	"  info [--stats] DUMP\n"
	"                summarise a heap dump: Go version, records, objects by size,\n"
	"                goroutines by state, segments, finalizers, memstats;\n"
	"                --stats adds the time and memory reading it took, on stderr\n"
	"  object DUMP ADDRESS...\n"
	"                show the heap object containing each address (interior\n"
	"                pointers too) and where its pointer words point\n"
	"  types BINARY [PATTERN]\n"
	"                the DWARF types of a Go binary (--summary: table sizes only)\n"
	"  vars BINARY [PATTERN]\n"
	"                its globals and functions' variables with their locations\n"
	"                (--pc PC: evaluated at PC; --dump DUMP: in the dump's frames)\n"
	"  help          show this text\n"
	"  version       show heapref's version\n"
	"\n"
	"exit status: 0 success, 1 bad input, 2 usage error, 3 out of memory or output error,\n"
	"  4 the dump was not written by the binary (--force goes on)\n";

static int exit_status_of(const struct hr_error *err)
{
	switch (err->code) {
	case HR_EINPUT:
	case HR_EIO:
		return EXIT_BAD_INPUT;
	case HR_EUSAGE:
		return EXIT_USAGE;
	default:
		return EXIT_RESOURCES;
	}
}

static int report(const struct hr_error *err)
{
	fprintf(stderr, "heapref: %s\n", err->msg);
	return exit_status_of(err);
}

static int usage_error(const char *what)
{
	fprintf(stderr, "heapref: %s\n%s", what, usage);
	return EXIT_USAGE;
}

/* Opens a dump; with stats, reports how long reading and indexing took and what it holds. */
static struct hr_dump *open_dump(const char *path, struct stats *stats, struct hr_error *err)
{
	struct hr_dump *dump = hr_dump_open(path, err);

	if (dump && stats) {
		stats_mark(stats, "read+index", stderr);
		fprintf(stderr, "stats: %.0f MB, %zu objects; index %.1f MB (%.1f bytes per object)\n",
			(double)hr_dump_file_size(dump) / 1e6, hr_dump_object_count(dump),
			(double)hr_dump_index_bytes(dump) / 1e6,
			hr_dump_object_count(dump)
				? (double)hr_dump_index_bytes(dump) / (double)hr_dump_object_count(dump)
				: 0.0);
	}
	return dump;
}

static int cmd_info(int argc, char **argv)
{
	struct hr_error err = { 0 };
	struct stats *stats = NULL;
	struct hr_dump *dump;
	int rc;

	if (argc > 0 && !strcmp(argv[0], "--stats")) {
		stats = stats_start();
		argc--;
		argv++;
	}
	if (argc != 1) {
		stats_stop(stats);
		return usage_error("info takes one argument: the heap dump file");
	}
	dump = open_dump(argv[0], stats, &err);
	if (!dump) {
		stats_stop(stats);
		return report(&err);
	}
	rc = hr_write_dump_info(stdout, dump, &err);
	stats_mark(stats, "summary", stderr);
	stats_stop(stats);
	hr_dump_free(dump);
	if (rc) {
		fprintf(stderr, "heapref: standard output: %s\n", err.msg);
		return EXIT_RESOURCES;
	}
	return EXIT_OK;
}

static int parse_address(const char *text, uint64_t *addr)
{
	char *end;

	errno = 0;
	*addr = strtoull(text, &end, 0);
	return errno == 0 && end != text && *end == '\0' ? 0 : -1;
}

static int cmd_object(int argc, char **argv)
{
	struct hr_error err = { 0 };
	struct hr_dump *dump;
	uint64_t addr;
	int i, rc = 0;

	if (argc < 2)
		return usage_error("object takes a heap dump file and one or more addresses");
	for (i = 1; i < argc; i++)
		if (parse_address(argv[i], &addr))
			return usage_error("object: addresses are numbers, like 0xc000012340");
	dump = hr_dump_open(argv[0], &err);
	if (!dump)
		return report(&err);
	for (i = 1; i < argc && !rc; i++) {
		parse_address(argv[i], &addr);
		rc = hr_write_object_at(stdout, dump, addr, 64, &err);
	}
	hr_dump_free(dump);
	if (rc) {
		fprintf(stderr, "heapref: standard output: %s\n", err.msg);
		return EXIT_RESOURCES;
	}
	return EXIT_OK;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : NULL;

	if (!cmd)
		return usage_error("no command given");
	if (!strcmp(cmd, "analyze"))
		return cmd_analyze(argc - 2, argv + 2);
	if (!strcmp(cmd, "why"))
		return cmd_why(argc - 2, argv + 2);
	if (!strcmp(cmd, "retained"))
		return cmd_retained(argc - 2, argv + 2);
	if (!strcmp(cmd, "diff"))
		return cmd_diff(argc - 2, argv + 2);
	if (!strcmp(cmd, "info"))
		return cmd_info(argc - 2, argv + 2);
	if (!strcmp(cmd, "object"))
		return cmd_object(argc - 2, argv + 2);
	if (!strcmp(cmd, "types"))
		return cmd_types(argc - 2, argv + 2);
	if (!strcmp(cmd, "vars"))
		return cmd_vars(argc - 2, argv + 2);
	if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
		fputs(usage, stdout);
		return EXIT_OK;
	}
	if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
		puts("heapref " HEAPREF_VERSION);
		return EXIT_OK;
	}
	return usage_error("unknown command");
}
