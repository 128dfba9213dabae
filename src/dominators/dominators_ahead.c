/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dominators_ahead.c - the heap's dominator tree made on a thread of its own while pass 1
 * walks the heap (see dominators.h, hr_heap_dominators_start()).
 *
 * The tree's search and pass 1's walk both wait on memory much of the time: beside each
 * other they take less time than one after the other (mixed-4g: suspects 8.7-10.4 s
 * with the tree after the scan, 5.8-8.0 s beside it, docs/performance.md). The graph
 * needs nothing of the scan but its root variables and their edges, all known (save in
 * rare heaps) once the roots are walked: so the tree is made then, beside the heap walk,
 * and kept if the scan's final graph is the same, which finish() checks in full.
 * Otherwise it is made again from the final graph: the tree never depends on timing.
 */
#include <pthread.h>
#include <stdlib.h>

#include "heapref/dominators.h"

struct hr_heap_dom_ahead {
	const struct hr_dump *dump;
	struct hr_heap_graph *g;      /* the thread's until it is joined, then the tree's */
	struct hr_heap_dominators *hd; /* the thread's answer, or NULL if it failed */
	struct hr_error err;           /* why, not reported: the tree is made again */
	pthread_t thread;
};

static void *make_tree(void *arg)
{
	struct hr_heap_dom_ahead *a = arg;

	a->hd = hr_heap_dominators_of(a->dump, a->g, &a->err);
	a->g = NULL; /* the tree's now, or freed */
	return NULL;
}

struct hr_heap_dom_ahead *hr_heap_dominators_start(const struct hr_dump *dump,
						   const struct hr_chains *tree,
						   const struct hr_root_edge *edges, size_t nedges)
{
	struct hr_heap_dom_ahead *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->dump = dump;
	if (!(a->g = hr_heap_graph_of_edges(dump, tree, edges, nedges, &a->err)) ||
	    pthread_create(&a->thread, NULL, make_tree, a)) {
		hr_heap_graph_free(a->g);
		free(a);
		return NULL;
	}
	return a;
}

struct hr_heap_dominators *hr_heap_dominators_finish(struct hr_heap_dom_ahead *a,
						     const struct hr_chains *tree,
						     const struct hr_scan_result *result,
						     bool *kept, struct hr_error *err)
{
	const struct hr_dump *dump = a->dump;
	struct hr_heap_dominators *hd;
	struct hr_heap_graph *g;

	*kept = false;
	pthread_join(a->thread, NULL);
	hd = a->hd;
	free(a);
	if (!(g = hr_heap_graph_new(dump, tree, result, err))) {
		hr_heap_dominators_free(hd);
		return NULL;
	}
	if (hd && hr_heap_graph_same(hr_heap_dom_graph(hd), g)) {
		hr_heap_graph_free(g);
		*kept = true;
		return hd;
	}
	hr_heap_dominators_free(hd);
	return hr_heap_dominators_of(dump, g, err);
}

void hr_heap_dominators_abandon(struct hr_heap_dom_ahead *a)
{
	if (!a)
		return;
	pthread_join(a->thread, NULL);
	hr_heap_dominators_free(a->hd);
	free(a);
}
