/* SPDX-License-Identifier: Apache-2.0 */
/*
 * commands.h - subcommands implemented outside main.c. Each takes the arguments after
 * its name and returns the process exit status (0 success, 1 bad input, 2 usage,
 * 3 out of memory or output error, 4 a dump the binary did not write), having printed
 * any error as one line "heapref: ...".
 */
#ifndef HEAPREF_CLI_COMMANDS_H
#define HEAPREF_CLI_COMMANDS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "heapref/analysis.h"
#include "heapref/binary.h"
#include "stats.h"

struct hr_binary;
struct hr_chains;
struct hr_dump;
struct hr_error;

/* heapref types [--summary | --rtype ADDR] BINARY [PATTERN] (cmd_binary.c) */
int cmd_types(int argc, char **argv);
/* heapref vars [--pc PC | --dump DUMP] BINARY [PATTERN] (cmd_binary.c) */
int cmd_vars(int argc, char **argv);

/* heapref analyze [-o FILE] [--text ...] [--max-depth N] [--stats] BINARY DUMP (cmd_analyze.c) */
int cmd_analyze(int argc, char **argv);
/* heapref why [--max-depth N] [--stats] BINARY DUMP ADDRESS... (cmd_analyze.c) */
int cmd_why(int argc, char **argv);
/* heapref retained [--format text|tsv] [-n N] ... BINARY DUMP (cmd_analyze.c) */
int cmd_retained(int argc, char **argv);
/* heapref goroutines [--format text|tsv] ... BINARY DUMP (cmd_analyze.c) */
int cmd_goroutines(int argc, char **argv);
/* heapref suspects [--format text|json] [-o FILE] [--threshold PCT] ... BINARY DUMP
 * (cmd_analyze.c) */
int cmd_suspects(int argc, char **argv);
/* heapref allocs [-o FILE] BINARY DUMP (cmd_allocs.c) */
int cmd_allocs(int argc, char **argv);
/* heapref hprof [-o FILE] [--force] BINARY DUMP (cmd_hprof.c) */
int cmd_hprof(int argc, char **argv);

/* heapref diff [--full-chains] [--max-depth N] [--stats] [--force] --text OLD_BINARY
 * OLD_DUMP NEW_BINARY NEW_DUMP (cmd_diff.c) */
int cmd_diff(int argc, char **argv);

/* --- one analysis, shared by analyze, why and diff (cmd_analyze.c) ---------------------- */

/* What a command asks of the analysis of one BINARY DUMP pair. */
struct analysis_options {
	struct hr_analysis_request rq; /* what the analysis keeps and makes (analysis.h);
					* analysis_run() adds progress and the phases */
	struct stats *stats;  /* --stats, or NULL */
	const char *input_name; /* what to call the heap input in messages, NULL: its path */
	const char *binary_name; /* what to call the binary in messages, NULL: its path */
	bool live;              /* the heap input is the core just taken of a process (--pid) */
};

/* One pair read and analysed: what the analysis made, and the inputs it borrows. */
struct analysis {
	struct hr_dump *dump;
	struct hr_binary *bin;
	struct hr_analysis an;
};

/*
 * True, having printed the one line of this usage error, when the dump looks like an ELF
 * file and the binary like a heap dump. command names the command in the message.
 */
bool inputs_swapped(const char *command, const char *binary, const char *dump);

/*
 * Reads the dump and the binary and analyses them (hr_analysis_run(): the binary must
 * have written the dump, unless o->rq.force), printing its warnings and, with --stats,
 * the time of each phase. Returns 0 with *an filled (release it
 * with analysis_release()), or the exit status of the failure, having printed its one
 * line and left *an empty.
 */
int analysis_run(const char *binary, const char *dump, const struct analysis_options *o,
		 struct analysis *an);
void analysis_release(struct analysis *an);

#endif
