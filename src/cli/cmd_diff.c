/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_diff.c - `heapref diff`: analyses two BINARY DUMP pairs as analyze does (the same
 * checks and options) and writes how each chain grew from the old dump to the new one,
 * as a text table on standard output (src/writers/diff.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "outputs.h"
#include "heapref/binary.h"
#include "heapref/chains.h"
#include "heapref/writers.h"

struct diff_args {
	const char *paths[4]; /* OLD_BINARY OLD_DUMP NEW_BINARY NEW_DUMP */
	const char *output;   /* -o, the profile without --text */
	struct analysis_options opts;
	bool text;
	bool by_index;
	bool stats;
};

static bool parse_depth(const char *text, uint32_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(text, &end, 10);
	if (errno || end == text || *end || v > UINT32_MAX || text[0] == '-')
		return false;
	*out = (uint32_t)v;
	return true;
}

/* The arguments of diff: options anywhere, four operands. */
static int parse_args(int argc, char **argv, struct diff_args *a)
{
	const char *max_depth = NULL;
	const struct cli_opt opts[] = {
		{ "--output", "-o", NULL, &a->output },
		{ "--text", NULL, &a->text, NULL },
		{ "--by-index", NULL, &a->by_index, NULL },
		{ "--full-chains", NULL, &a->opts.rq.full_chains, NULL },
		{ "--max-depth", NULL, NULL, &max_depth },
		{ "--stats", NULL, &a->stats, NULL },
		{ "--force", NULL, &a->opts.rq.force, NULL },
	};
	int n, rc;

	*a = (struct diff_args){ .opts = { .rq = { .max_depth = 256 } } };
	if ((rc = cli_parse("diff", argc, argv, opts, (int)(sizeof(opts) / sizeof(opts[0])), &n)))
		return rc;
	if (max_depth && !parse_depth(max_depth, &a->opts.rq.max_depth))
		return cli_usage_error("diff", "--max-depth takes a number, not %s", max_depth);
	if (a->output && !a->output[0])
		return cli_usage_error("diff", "-o takes a file name");
	if (n != 4)
		return cli_usage_error("diff", "diff takes two binaries and two heap dumps");
	if (a->text && a->output)
		return cli_usage_error("diff", "--text writes to standard output: no -o");
	if (a->by_index && !a->text)
		return cli_usage_error("diff", "--by-index is for the text table (--text)");
	for (int i = 0; i < 4; i++)
		a->paths[i] = argv[i];
	if (!a->output)
		a->output = "heapref-diff.pb.gz";
	return ST_OK;
}

/*
 * The chain tree of one pair, the rest of its analysis freed at once (the binary's build
 * ID copied to build_id first); NULL on failure.
 */
static struct hr_chains *analyse(const char *binary, const char *dump,
				 const struct analysis_options *o, char build_id[128], int *st)
{
	struct analysis an;
	struct hr_chains *tree;

	if ((*st = analysis_run(binary, dump, o, &an)) != ST_OK)
		return NULL;
	snprintf(build_id, 128, "%s", hr_binary_build_id(an.bin));
	tree = an.an.tree;
	an.an.tree = NULL;
	analysis_release(&an);
	return tree;
}

/* tree with its elements folded into [*] unless --by-index; NULL if out of memory. */
static struct hr_chains *for_table(const struct diff_args *a, struct hr_chains *tree)
{
	struct hr_chains *folded;

	if (a->by_index)
		return tree;
	folded = hr_chains_fold_elements(tree);
	hr_chains_free(tree);
	return folded;
}

struct diff_trees {
	const struct hr_chains *old, *new;
	struct hr_pprof_options pprof;
};

static int write_diff_profile(FILE *out, void *ctx, struct hr_error *err)
{
	const struct diff_trees *t = ctx;

	return hr_write_pprof_diff(out, t->old, t->new, &t->pprof, err);
}

/* The diff as a pprof profile, into out. */
static int write_profile(const struct diff_args *a, struct output *out,
			 const struct hr_chains *old, const struct hr_chains *new,
			 const char *build_id)
{
	struct hr_error err = { 0 };
	struct diff_trees t = { old, new, { .binary = a->paths[2], .build_id = build_id } };

	return output_write(out, write_diff_profile, &t, &err) ? cli_report(&err) : ST_OK;
}

/* The profile's output, prepared and checked against the four inputs before they are read. */
static int prepare_output(const struct diff_args *a, struct output *out)
{
	static const char *const roles[4] = { "the old binary", "the old heap input",
					      "the new binary", "the new heap input" };
	struct hr_error err = { 0 };

	if (a->text)
		return ST_OK;
	if (output_prepare(out, a->output, OUTPUT_REPORT, &err))
		return cli_report(&err);
	for (int i = 0; i < 4; i++)
		if (output_refuse_input(out, a->paths[i], roles[i], &err))
			return cli_report(&err);
	return ST_OK;
}

static int write_diff(const struct hr_chains *old, const struct hr_chains *new)
{
	struct hr_error err = { 0 };

	if (hr_write_chain_diff(stdout, old, new, &err) ||
	    (fflush(stdout) && hr_error_set(&err, HR_EIO, "%s", strerror(errno)))) {
		fprintf(stderr, "heapref: standard output: %s\n", err.msg);
		return ST_RESOURCES;
	}
	return ST_OK;
}

int cmd_diff(int argc, char **argv)
{
	struct diff_args a;
	struct hr_chains *old = NULL, *new = NULL;
	struct output out = OUTPUT_INIT;
	char build_id[128]; /* the new binary's, for the profile */
	int st = parse_args(argc, argv, &a);

	if (st)
		return st == CLI_HELP ? ST_OK : st;
	if (inputs_swapped("diff", a.paths[0], a.paths[1]) ||
	    inputs_swapped("diff", a.paths[2], a.paths[3]))
		return ST_USAGE;
	if ((st = prepare_output(&a, &out)) != ST_OK) {
		output_release(&out);
		return st;
	}
	a.opts.stats = a.stats ? stats_start() : NULL;
	if ((old = analyse(a.paths[0], a.paths[1], &a.opts, build_id, &st)) &&
	    (new = analyse(a.paths[2], a.paths[3], &a.opts, build_id, &st))) {
		if (a.text) {
			old = for_table(&a, old);
			new = for_table(&a, new);
		}
		if (!old || !new) {
			fputs("heapref: out of memory for the diff\n", stderr);
			st = ST_RESOURCES;
		} else {
			st = a.text ? write_diff(old, new)
				    : write_profile(&a, &out, old, new, build_id);
			stats_mark(a.opts.stats, "output", stderr);
		}
	}
	hr_chains_free(old);
	hr_chains_free(new);
	stats_stop(a.opts.stats);
	output_release(&out);
	return st;
}
