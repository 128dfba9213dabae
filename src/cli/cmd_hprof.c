/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_hprof.c - `heapref hprof [-o FILE] [--force] BINARY DUMP`: the reachable heap as a
 * Java hprof file (src/writers/hprof.c, docs/hprof.md), for the Java heap tools.
 */
#include <stdio.h>

#include "args.h"
#include "commands.h"
#include "outputs.h"
#include "heapref/writers.h"

static int write_hprof(FILE *out, void *ctx, struct hr_error *err)
{
	const struct analysis *an = ctx;

	return hr_write_hprof(out, an->dump, &an->an.img, an->an.result, err);
}

int cmd_hprof(int argc, char **argv)
{
	const char *output = NULL;
	bool force = false;
	const struct cli_opt opts[] = { { "--output", "-o", NULL, &output },
					{ "--force", NULL, &force, NULL } };
	struct analysis_options o = { .rq = { .max_depth = 256, .paths = true, .types = true } };
	struct analysis an;
	struct output out = OUTPUT_INIT;
	struct hr_error err = { 0 };
	int n, st = cli_parse("hprof", argc, argv, opts, 2, &n);

	if (st)
		return st == CLI_HELP ? ST_OK : st;
	if (n != 2)
		return cli_usage_error("hprof", "hprof takes a binary and a heap dump");
	if (output && !output[0])
		return cli_usage_error("hprof", "-o takes a file name");
	if (inputs_swapped("hprof", argv[0], argv[1]))
		return ST_USAGE;
	o.rq.force = force;
	/* the export holds the heap's contents: 0600, like the core it may come from */
	if (output_prepare(&out, output ? output : "heapref.hprof", OUTPUT_MEMORY, &err) ||
	    output_refuse_input(&out, argv[0], "the binary", &err) ||
	    output_refuse_input(&out, argv[1], "the heap input", &err)) {
		st = cli_report(&err);
	} else if ((st = analysis_run(argv[0], argv[1], &o, &an)) == ST_OK) {
		if (output_write(&out, write_hprof, &an, &err))
			st = cli_report(&err);
		analysis_release(&an);
	}
	output_release(&out);
	return st;
}
