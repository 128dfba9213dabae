/* SPDX-License-Identifier: Apache-2.0 */
/*
 * views.h - the views: other chain trees made from the scan's tree and its result
 * (result.h), a stage after the chain tree and the dominator tree, before the writers.
 *
 *   HR_VIEW_BY_ALLOC      (analyze --by-alloc) a copy of the tree in which each reached
 *                         object the memory profile sampled (the model's alloc samples)
 *                         is charged below its chain to the frames of the stack that
 *                         allocated it, one node per frame named "@ FUNCTION", the
 *                         allocating function first (leading runtime frames and
 *                         runtime.goexit left out, as runtime/pprof does); the others
 *                         stay on their chain. Needs paths.
 *   HR_VIEW_BY_TYPE       (analyze --by-type) a copy in which each object is charged below
 *                         its chain to a node naming its type, "type main.Item", "type
 *                         []uint8" (an array of uint8: a slice's backing array), "type ?"
 *                         (reached by bitmap only). Needs paths and types.
 *   HR_VIEW_TYPES_FIRST   (analyze --types-first) the same transposed: the types are the
 *                         roots, below each the chains holding objects of it.
 *   HR_VIEW_BY_DOMINATOR  (analyze --attribution dominator) each object charged below its
 *                         immediate dominator's chain, then the last name of the chain the
 *                         scan charged it to (`main.items -> m. (...) -> $mapval.
 *                         (*main.Item)`), so that a node's cumulative value is what would
 *                         be freed with it; what no single root dominates goes under
 *                         "$shared by several roots". Needs paths and the dominator tree.
 */
#ifndef HEAPREF_VIEWS_H
#define HEAPREF_VIEWS_H

#include <stdbool.h>
#include <stdint.h>

#include "heapref/base.h"
#include "heapref/binary.h"
#include "heapref/chains.h"
#include "heapref/dominators.h"
#include "heapref/model.h"
#include "heapref/result.h"

enum hr_view {
	HR_VIEW_BY_ALLOC,
	HR_VIEW_BY_TYPE,
	HR_VIEW_TYPES_FIRST,
	HR_VIEW_BY_DOMINATOR,
};

/* What a view reads besides the tree; dominators only for HR_VIEW_BY_DOMINATOR. */
struct hr_view_sources {
	const struct hr_dump *model;
	const struct hr_binary *bin;                /* type names */
	const struct hr_scan_result *result;
	const struct hr_heap_dominators *dominators; /* or NULL */
};

/*
 * The tree of view `view` made from tree (the scan's: its names, and what its result
 * charged where); max_depth and fold_recursion as for the scan's tree. The caller frees
 * it; NULL (err set) when out of memory, or HR_EUSAGE without what the view needs.
 */
struct hr_chains *hr_view_chains(enum hr_view view, const struct hr_chains *tree,
				 const struct hr_view_sources *src, uint32_t max_depth,
				 bool fold_recursion, struct hr_error *err);

/*
 * Offers every reached object to tree as an example of the chain node it is charged to
 * (hr_chains_offer_example(); the tree keeps the biggest few of each). Needs paths.
 * 0, or HR_ENOMEM with err set.
 */
int hr_view_offer_examples(struct hr_chains *tree, const struct hr_view_sources *src,
			   struct hr_error *err);

#endif
