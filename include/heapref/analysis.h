/* SPDX-License-Identifier: Apache-2.0 */
/*
 * analysis.h - one analysis of a heap: the stages after the front ends, run in order
 * for what a command wants to show, by the command line, the tests and the fuzzers
 * alike.
 *
 *     model, binary  ->  checks  ->  scan  ->  result  ->  dominator tree  ->  view
 *
 * Given the model (model.h) and the binary (binary.h) and what is wanted (paths, the
 * object graph, the dominator tree, goroutines' shares, examples, a view of the tree),
 * it works out what the scan keeps, checks that the binary wrote the heap (refusing a
 * pair that does not go together unless forced), runs both passes, takes the scan's
 * result and frees the scan, then makes the dominator tree and the view asked for. (The
 * dominator tree is made beside pass 1's heap walk when there is a processor to spare,
 * and kept only if the scan's final graph is the one it was made from.)
 * What it has to say besides a failure comes back as warnings, for the caller to print:
 * nothing here prints.
 */
#ifndef HEAPREF_ANALYSIS_H
#define HEAPREF_ANALYSIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "heapref/base.h"
#include "heapref/binary.h"
#include "heapref/chains.h"
#include "heapref/dominators.h"
#include "heapref/leaks.h"
#include "heapref/model.h"
#include "heapref/result.h"
#include "heapref/scan.h"
#include "heapref/suspects.h"
#include "heapref/views.h"

struct hr_analysis;

/*
 * Told as each phase of the analysis ends, with the analysis so far: "checks" (the pair
 * goes together or is forced; an->warnings said), "pass 1" (sum: the counts of pass 1,
 * its threads' work), "pass 2" (sum: the scan's), "leaks", "dominators", "suspects",
 * "view".
 */
typedef void (*hr_analysis_phase_fn)(void *ctx, const char *phase, const struct hr_analysis *an,
				     const struct hr_scan_summary *sum);

/* What a command wants of an analysis. */
struct hr_analysis_request {
	uint32_t max_depth;      /* of the chain tree (0: no limit) */
	bool full_chains;        /* do not fold recursion (a list of T into its first T) */
	bool force;              /* analyse a heap the binary does not look to have written */
	struct hr_scan_options scan; /* threads, progress, the tests' knobs */
	bool paths;              /* each object's chain and holder (why, retained, hprof) */
	bool types;              /* each object's type as the walk read it (hprof) */
	bool graph;              /* the roots' edges, for the object graph (why -n K) */
	bool dominators;         /* the dominator tree (retained) */
	bool goroutines;         /* what each goroutine's stack reached first */
	bool leaks;              /* which goroutines are leaked (leaks.h) */
	bool leaks_retained;     /* and what leaked goroutines alone keep alive (goroutines;
				  * the suspects ask for it themselves) */
	bool suspects;           /* the leak suspects (suspects.h), over: */
	double threshold_percent;
	const struct hr_chains *baseline; /* suspects: an earlier dump's tree, or NULL */
	unsigned examples;       /* examples kept per chain node (0: none) */
	bool view_wanted;        /* a view of the tree (views.h): */
	enum hr_view view;
	bool dominators_after;   /* the tree made after the scan even with a processor to
				  * spare (benchmarks: what it costs alone) */
	hr_analysis_phase_fn phase; /* or NULL */
	void *phase_ctx;
};

struct hr_analysis {
	const struct hr_dump *model;       /* borrowed: the caller's */
	const struct hr_binary *bin;       /* borrowed */
	struct hr_image img;               /* bin where the process loaded it */
	struct hr_chains *tree;            /* the chains as the scan charged them */
	struct hr_scan_result *result;
	struct hr_heap_dominators *dominators; /* when asked for, or for the dominator view */
	struct hr_heap_dom_ahead *ahead;   /* the dominator tree being made during the scan */
	enum hr_dom_made {
		HR_DOM_MADE_AFTER,  /* after the scan (one thread, or it could not start) */
		HR_DOM_MADE_BESIDE, /* beside pass 1's heap walk, and kept */
		HR_DOM_MADE_AGAIN,  /* beside it, then again: the scan's graph was not its */
	} dominators_made;
	struct hr_chains *view;            /* the view asked for, or NULL */
	struct hr_goroutine_leaks *leaks;  /* when asked for */
	struct hr_suspects *suspects;      /* when asked for */
	char **warnings;                   /* one line each, without "heapref: warning: " */
	size_t nwarnings;
};

/*
 * Analyses model with bin as rq asks, into *an (released with hr_analysis_release()
 * whatever this returns). Fails with err set: HR_EMISMATCH when the binary did not
 * write the heap (unless rq->force: then a warning), HR_EINPUT when the scan cannot
 * read the pair (pointer size, byte order), HR_ENOMEM.
 */
int hr_analysis_run(const struct hr_dump *model, const struct hr_binary *bin,
		    const struct hr_analysis_request *rq, struct hr_analysis *an,
		    struct hr_error *err);

/* The tree a profile of the analysis shows: the view if one was asked for, else the tree. */
const struct hr_chains *hr_analysis_chains(const struct hr_analysis *an);

void hr_analysis_release(struct hr_analysis *an);

#endif
