/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_allocs.c - `heapref allocs [-o FILE] BINARY DUMP`: the classic in-use heap profile
 * rebuilt from the dump's memory-profile records (src/writers/pprof.c), named after the
 * binary. No scan: the records are the runtime's own.
 */
#include <stdio.h>

#include "args.h"
#include "commands.h"
#include "inputs.h"
#include "outputs.h"
#include "heapref/binary.h"
#include "heapref/dump.h"
#include "heapref/writers.h"

struct allocs_output {
	const struct hr_dump *dump;
	struct hr_pprof_options pprof;
};

static int write_allocs(FILE *out, void *ctx, struct hr_error *err)
{
	const struct allocs_output *o = ctx;

	return hr_write_alloc_profile(out, o->dump, &o->pprof, err);
}

int cmd_allocs(int argc, char **argv)
{
	const char *output = NULL;
	const struct cli_opt opts[] = { { "--output", "-o", NULL, &output } };
	struct hr_error err = { 0 };
	struct hr_binary *bin = NULL;
	struct hr_dump *dump = NULL;
	struct output out = OUTPUT_INIT;
	int n, st = cli_parse("allocs", argc, argv, opts, 1, &n);

	if (st)
		return st == CLI_HELP ? ST_OK : st;
	if (n != 2)
		return cli_usage_error("allocs", "allocs takes a binary and a heap dump");
	if (output && !output[0])
		return cli_usage_error("allocs", "-o takes a file name");
	if (inputs_swapped("allocs", argv[0], argv[1]))
		return ST_USAGE;
	if (!output_prepare(&out, output ? output : "heapref-allocs.pb.gz", OUTPUT_REPORT, &err) &&
	    !output_refuse_input(&out, argv[0], "the binary", &err) &&
	    !output_refuse_input(&out, argv[1], "the heap input", &err) &&
	    !open_heap_input(&(struct heap_input){ .binary = argv[0], .input = argv[1] }, &bin,
			     &dump, &err)) {
		struct allocs_output o = { dump, { .binary = argv[0],
						   .build_id = hr_binary_build_id(bin) } };

		output_write(&out, write_allocs, &o, &err);
	}
	st = err.code ? cli_report(&err) : ST_OK;
	output_release(&out);
	hr_dump_free(dump);
	hr_binary_free(bin);
	return st;
}
