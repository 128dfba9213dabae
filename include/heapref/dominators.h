/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dominators.h - who keeps what alive alone: the dominator tree of the object graph and
 * the retained sizes it gives (a stage beside the chain tree, after the scanner).
 *
 * Node d dominates node v when every path from the root to v passes through d; v's
 * immediate dominator is its closest such d. If d were freed, everything it dominates
 * would be freed with it: d's retained size is the sum of the sizes of the nodes it
 * dominates (itself included).
 *
 * Two layers:
 *   - hr_dominators_compute(): the semi-NCA algorithm (Georgiadis, Tarjan) on any graph
 *     given by a successor callback, with flat integer arrays and no recursion.
 *   - the heap graph: a virtual root (node 0), one node per root variable under it (the
 *     roots of the chain tree: globals, frame variables, finalizers...), then one node
 *     per heap object. Edges: the virtual root to each root variable, a root variable to
 *     the objects its pointer words lead to (as the scanner found them: the result's root edges),
 *     an object to the objects its pointer words lead to (the dump's bitmaps: every word
 *     the GC would follow, so exactly the objects reachable from the roots are in it).
 *
 * Lifecycle: hr_heap_dominators_new() (or, made while the scan goes on,
 * hr_heap_dominators_start() and _finish()), the accessors, hr_heap_dominators_free().
 */
#ifndef HEAPREF_DOMINATORS_H
#define HEAPREF_DOMINATORS_H

#include <stdbool.h>
#include <stdint.h>

#include "heapref/base.h"
#include "heapref/chains.h"
#include "heapref/dump.h"
#include "heapref/model.h"
#include "heapref/result.h"

#define HR_DOM_NONE UINT32_MAX /* no node: the root's dominator, or an unreachable node */

/* --- any graph ------------------------------------------------------------------------ */

/*
 * Receives one successor v of the node being expanded. sink: v has no successors (the
 * same answer every time v is emitted); the computation then leaves it unnumbered.
 */
typedef void hr_dom_emit_fn(void *emit_ctx, uint32_t v, bool sink);

/*
 * A graph on nodes 0 .. nnodes-1 (at most HR_DOM_NODES_MAX), node 0 the root.
 * successors() calls emit once per edge (u, v), duplicates allowed, and returns 0 or a
 * negative HR_E*.
 */
struct hr_dom_graph {
	uint32_t nnodes;
	int (*successors)(void *ctx, uint32_t u, hr_dom_emit_fn *emit, void *emit_ctx);
	void *ctx;
	/* optional: told the node whose successors are asked for next, to prefetch them */
	void (*next)(void *ctx, uint32_t u);
};

#define HR_DOM_SINK (UINT32_C(1) << 31) /* in hr_dom_tree.number: a sink, its idom's number */
#define HR_DOM_NODES_MAX (HR_DOM_SINK - 1)

/*
 * The dominator tree of a graph: what hr_dominators_compute() returns. The reached
 * nodes other than sinks are numbered 1..nreached in depth-first preorder (the root 1):
 * a node's dominators are numbered lower. Sinks are not numbered; their slot holds their
 * immediate dominator instead. 4 bytes a node and 4 a numbered node.
 */
struct hr_dom_tree {
	uint32_t nnodes;
	uint32_t nreached;   /* numbered nodes: reached from the root, not sinks; the root included */
	uint32_t nsinks;     /* sinks reached */
	uint32_t *number;    /* [nnodes]: the node's number; HR_DOM_SINK | its idom (a node) for
			      * a reached sink; 0 for a node the root does not reach */
	uint32_t *idom;      /* [nreached + 1]: by number, the immediate dominator (a node);
			      * HR_DOM_NONE for the root */
};

/*
 * Computes the dominator tree of g into *tree (whose arrays the caller frees with
 * hr_dom_tree_release()). Memory: besides the result (4 bytes a node, 8 a numbered
 * node), 8 bytes per numbered node and 8 per edge that is not a tree edge at once (16
 * while they are sorted), and the search's stack (8 bytes per edge to a node not yet
 * numbered when it is emitted), freed before returning. 0, or HR_ENOMEM / HR_EUSAGE
 * (too many nodes) / the successor callback's error with err set.
 */
int hr_dominators_compute(const struct hr_dom_graph *g, struct hr_dom_tree *tree,
			  struct hr_error *err);
/* Node v's immediate dominator (a node), HR_DOM_NONE for the root and unreached nodes. */
uint32_t hr_dom_tree_idom(const struct hr_dom_tree *tree, uint32_t v);
/* The numbered nodes by number - 1 (the caller frees it; NULL when out of memory). */
uint32_t *hr_dom_tree_order(const struct hr_dom_tree *tree);
void hr_dom_tree_release(struct hr_dom_tree *tree);

/* --- the heap graph --------------------------------------------------------------------- */

struct hr_heap_graph;

/*
 * The heap graph of a dump whose scan kept its root edges (hr_scan_keep_root_edges(),
 * in result): node 0 the virtual root, nodes 1..roots the root variables, then one node
 * per heap object (object i is node roots + 1 + i). The dump, tree and result must
 * outlive it. NULL (err set) when out of memory.
 */
struct hr_heap_graph *hr_heap_graph_new(const struct hr_dump *dump, const struct hr_chains *tree,
				       const struct hr_scan_result *result, struct hr_error *err);
/* The same from root edges given as hr_result_root_edges() would give them. */
struct hr_heap_graph *hr_heap_graph_of_edges(const struct hr_dump *dump,
					     const struct hr_chains *tree,
					     const struct hr_root_edge *edges, size_t nedges,
					     struct hr_error *err);
/* Whether a and b are the same graph: the same dump, root variables and root edges. */
bool hr_heap_graph_same(const struct hr_heap_graph *a, const struct hr_heap_graph *b);
void hr_heap_graph_free(struct hr_heap_graph *g);
uint32_t hr_heap_graph_count(const struct hr_heap_graph *g);
uint32_t hr_heap_graph_root_count(const struct hr_heap_graph *g);
/* The chain tree root node of root variable k (1 .. roots), HR_CHAINS_NONE otherwise. */
uint32_t hr_heap_graph_root_chain(const struct hr_heap_graph *g, uint32_t k);
/* The successors of node u, for struct hr_dom_graph (ctx: the graph). */
int hr_heap_graph_successors(void *ctx, uint32_t u, hr_dom_emit_fn *emit, void *emit_ctx);
/*
 * A reader of the graph's successors: its scratch. Threads may read one graph at once,
 * each with a reader of its own (zeroed to start; released with hr_graph_reader_release).
 * With prefetch, the entry of each target that has pointers is prefetched as it is
 * emitted, for a search that expands it next (hr_heap_graph_successors() does).
 */
struct hr_graph_reader {
	uint64_t *words;
	size_t words_cap;
	bool prefetch;
};
int hr_heap_graph_successors_in(const struct hr_heap_graph *g, struct hr_graph_reader *rd,
				uint32_t u, hr_dom_emit_fn *emit, void *emit_ctx);
void hr_graph_reader_release(struct hr_graph_reader *rd);
/* The hint of struct hr_dom_graph: prefetches object u's contents, its entry loaded. */
void hr_heap_graph_prefetch(void *ctx, uint32_t u);

/* The node of the root variable whose chain tree root is chain_root, 0 if none. */
uint32_t hr_heap_graph_root_node(const struct hr_heap_graph *g, uint32_t chain_root);

/*
 * A shortest path from a root variable to heap object target that passes through none
 * of the nodes whose bits are set in `avoid` (one bit per graph node; NULL: none),
 * breadth first from all root variables at once. On success *path holds the path's
 * graph nodes, the root variable first and target's node last (*n of them; the caller
 * frees *path). HR_OK, 1 when no such path exists, or HR_ENOMEM (err set).
 */
int hr_heap_graph_path(struct hr_heap_graph *g, uint32_t target, const uint64_t *avoid,
		       uint32_t **path, size_t *n, struct hr_error *err);

/* Whether a search may go through graph node v. */
typedef bool hr_graph_node_filter(void *ctx, uint32_t v);

/*
 * The same from one graph node `from` (a root variable, or an object) to graph node
 * `to`, through the nodes allow() allows (NULL: all; the search stays in them, as in
 * what a root dominates): *path starts with from and ends with to. Its memory is a bit
 * per graph node and 8 bytes a node it visits. HR_OK, 1 when to cannot be reached from
 * from, or HR_ENOMEM.
 */
int hr_heap_graph_path_from(struct hr_heap_graph *g, uint32_t from, uint32_t to,
			    hr_graph_node_filter *allow, void *allow_ctx, uint32_t **path,
			    size_t *n, struct hr_error *err);

struct hr_heap_dominators;

/* One node of the heap graph, for callers: a root variable or a heap object. */
struct hr_dom_node {
	uint32_t root;            /* chain tree root node id, or HR_CHAINS_NONE for an object */
	uint32_t object;          /* heap object index, or UINT32_MAX for a root */
	uint32_t idom;            /* heap graph node id of its immediate dominator; 0 the
				   * virtual root; HR_DOM_NONE if not reached */
	uint64_t retained_bytes;  /* its own size (0 for a root) and all it dominates */
	uint64_t retained_objects;
};

/*
 * The dominator tree of the heap graph of a dump whose scan kept its root edges
 * (hr_scan_keep_root_edges(), in result), with every node's retained size. The dump,
 * tree and result must outlive it. NULL (err set) when out of memory.
 */
struct hr_heap_dominators *hr_heap_dominators_new(const struct hr_dump *dump,
						  const struct hr_chains *tree,
						  const struct hr_scan_result *result,
						  struct hr_error *err);
/* The same of graph g, which it takes (freed with the tree, or on failure). */
struct hr_heap_dominators *hr_heap_dominators_of(const struct hr_dump *dump,
						 struct hr_heap_graph *g, struct hr_error *err);

/*
 * The dominator tree made on a thread of its own while the scan goes on, from the root
 * edges known once pass 1 has walked the roots (hr_scan_root_edges_so_far()): the heap
 * objects' edges are the dump's, which the scan does not change, so only root edges the
 * rest of the scan adds could make the tree differ.
 *   - hr_heap_dominators_start(): the graph made from edges (the caller keeps them) and
 *     tree now, on the calling thread; the tree computed on a new one. NULL when it
 *     could not start (no memory, no thread): the caller makes the tree later, as usual.
 *   - hr_heap_dominators_finish(): once the scan is over, the tree of its result's graph
 *     (as hr_heap_dominators_new() makes it): the one made ahead if its graph is that
 *     graph (*kept then true), else made now. Frees ahead. NULL (err set) when out of
 *     memory.
 *   - hr_heap_dominators_abandon(): waits for the thread and frees all (NULL: nothing).
 */
struct hr_heap_dom_ahead;
struct hr_heap_dom_ahead *hr_heap_dominators_start(const struct hr_dump *dump,
						   const struct hr_chains *tree,
						   const struct hr_root_edge *edges, size_t nedges);
struct hr_heap_dominators *hr_heap_dominators_finish(struct hr_heap_dom_ahead *ahead,
						     const struct hr_chains *tree,
						     const struct hr_scan_result *result,
						     bool *kept, struct hr_error *err);
void hr_heap_dominators_abandon(struct hr_heap_dom_ahead *ahead);
void hr_heap_dominators_free(struct hr_heap_dominators *hd);

/* Node ids: 0 the virtual root, then the root variables, then the heap objects. */
uint32_t hr_heap_dom_count(const struct hr_heap_dominators *hd);
uint32_t hr_heap_dom_root_count(const struct hr_heap_dominators *hd);
/* The node of heap object index obj. */
uint32_t hr_heap_dom_object_node(const struct hr_heap_dominators *hd, uint32_t obj);
struct hr_dom_node hr_heap_dom_node(const struct hr_heap_dominators *hd, uint32_t id);
/* hr_heap_dom_node(hd, id).idom alone, without reading the object's size. */
uint32_t hr_heap_dom_idom(const struct hr_heap_dominators *hd, uint32_t id);
/*
 * The reached nodes that may dominate others (all but the objects without pointers),
 * for arrays over them: their count, and node id's index among them (0 .. count - 1;
 * HR_DOM_NONE for any other node).
 */
uint32_t hr_heap_dom_inner_count(const struct hr_heap_dominators *hd);
uint32_t hr_heap_dom_inner_index(const struct hr_heap_dominators *hd, uint32_t id);
/*
 * The index of the dominator of the node of inner index k (0 .. count - 1), lower than
 * k: a loop over k from 1 up sees each node after its dominator. HR_DOM_NONE for k = 0,
 * the virtual root.
 */
uint32_t hr_heap_dom_inner_parent(const struct hr_heap_dominators *hd, uint32_t k);
/*
 * For every inner index (hr_heap_dom_inner_index()), the child that retains most, by
 * node (ties: the lowest node; HR_DOM_NONE: no child): a malloc'ed array of
 * hr_heap_dom_inner_count() entries, NULL when out of memory.
 */
uint32_t *hr_heap_dom_biggest_children(const struct hr_heap_dominators *hd);

/*
 * A walk over the reached nodes, each after its immediate dominator: the virtual root
 * first, the nodes that may have successors in depth-first preorder, then the objects
 * without pointers. It costs 4 bytes an inner node until hr_heap_dom_walk_end().
 */
struct hr_dom_walk {
	const struct hr_heap_dominators *hd;
	uint32_t *order;
	uint64_t cursor;
};
/* HR_OK, or HR_ENOMEM (nothing to end then). */
int hr_heap_dom_walk_start(const struct hr_heap_dominators *hd, struct hr_dom_walk *w);
/* The next node; HR_DOM_NONE at the end. */
uint32_t hr_heap_dom_walk_next(struct hr_dom_walk *w);
void hr_heap_dom_walk_end(struct hr_dom_walk *w);
/* The size and address of heap object obj. */
uint64_t hr_heap_dom_object_size(const struct hr_heap_dominators *hd, uint32_t obj);
uint64_t hr_heap_dom_object_addr(const struct hr_heap_dominators *hd, uint32_t obj);

/* The heap graph the tree was computed on (for paths). */
struct hr_heap_graph *hr_heap_dom_graph(const struct hr_heap_dominators *hd);

/* --- memory several roots share ------------------------------------------------------- */

#define HR_GROUP_ROOTS_MAX 4 /* roots named per group; more_roots says there are others */

/*
 * What a set of root variables retains together and none of them alone: the objects
 * whose immediate dominator is the virtual root (the group's "tops") whose paths come
 * from exactly those roots, with all they dominate.
 */
struct hr_shared_group {
	uint32_t roots[HR_GROUP_ROOTS_MAX]; /* root variable nodes (1 .. roots), ascending */
	uint8_t nroots;
	bool more_roots;      /* more roots share it than are named (the lowest ids are) */
	uint64_t bytes, objects;
	uint32_t tops;        /* objects dominated by no root */
	uint32_t biggest;     /* the node of the top that retains most */
	uint32_t *top_nodes;  /* [tops]: the tops' nodes, ascending */
};

/*
 * The groups of shared memory, biggest first, into *groups (the caller frees them with
 * hr_shared_groups_free(); *n of them). With min_total > 0, none when all the shared
 * memory together is less (the grouping reads every edge of the graph once: a caller
 * that only wants groups over a size saves that). 0, or HR_ENOMEM with err set.
 */
int hr_heap_dom_shared_groups(const struct hr_heap_dominators *hd, uint64_t min_total,
			      struct hr_shared_group **groups, size_t *n, struct hr_error *err);
void hr_shared_groups_free(struct hr_shared_group *groups, size_t n);

#endif
