/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dominators.c - the dominator tree of any graph given by a successor callback (see
 * dominators.h): the semi-NCA algorithm of Georgiadis and Tarjan, on flat arrays indexed
 * by depth-first preorder, without recursion, on the graph without its sinks.
 *
 * A sink (a node the callback says has no successors: in the heap, an object without
 * pointers) changes no other node's dominators, since no path goes on from it; its own
 * immediate dominator is the nearest common dominator of its predecessors. So sinks are
 * not numbered, and most of them (one predecessor) cost no more than their number slot:
 *
 *   1. A depth-first search from the root numbers the reachable nodes that are not sinks
 *      1..n in preorder and records each one's tree parent. (An explicit stack holding
 *      every successor pushed, popped last in first out, skipping nodes already
 *      numbered: its tree is a depth-first tree, which is all the algorithm needs.) An
 *      edge that is not a tree edge is kept as a pair of numbers (to, from), when it is
 *      emitted (its target is numbered already) or when its stack entry is popped (its
 *      target was numbered meanwhile): no successor list is kept. A sink's first
 *      predecessor goes into its number slot, the others into a list of pairs. A node's
 *      successors are all taken before any is looked at, their number slots prefetched,
 *      and the graph is told which node comes next (struct hr_dom_graph's next): the
 *      search waits on memory, and this cut it by a sixth on the generated heaps.
 *   2. The pairs sorted by target, then source (hr_sort_u64()).
 *   3. Semidominators, from the highest number down, with the link-eval forest of
 *      Lengauer and Tarjan's simple version (path compression, iterative). The forest
 *      keeps, per node, the least semidominator on its compressed path (not the node
 *      that has it: only that value is ever read). A node without pairs has its tree
 *      parent as semidominator; the others' are written over their first pair.
 *   4. Immediate dominators, from the lowest number up: the nearest common ancestor, on
 *      the dominator tree built so far, of a node's tree parent and its semidominator,
 *      written over the tree parent.
 *   5. Each sink with several predecessors: their nearest common ancestor on the tree,
 *      folded from the highest number down (a sink that every node of a long chain
 *      points at climbs one step per predecessor, not the chain's depth each time).
 *   6. Numbers turned back into nodes, in the idoms and the sinks' slots, with a map
 *      from numbers to nodes made for that alone (a caller that walks the tree in
 *      preorder makes its own: hr_dom_tree_order()).
 */
#include <stdlib.h>
#include <string.h>

#include "heapref/dominators.h"

/*
 * An edge by numbers, as one key: to << 32 | from (sorted: by target, then source); for
 * a sink's other predecessors, `to` is the sink's node.
 */
static uint64_t pair(uint32_t to, uint32_t from)
{
	return (uint64_t)to << 32 | from;
}

static uint32_t pair_to(uint64_t p)
{
	return (uint32_t)(p >> 32);
}

static uint32_t pair_from(uint64_t p)
{
	return (uint32_t)p;
}

#define DOM_BATCH_MAX 4096 /* successors taken before they are looked at, at most */

struct dom_pairs {
	uint64_t *items;
	size_t n, cap;
};

struct dom_run {
	const struct hr_dom_graph *g;
	struct hr_dom_tree *t;
	uint32_t n;              /* nodes numbered so far */
	uint32_t *parent;        /* [n + 1]: by number, the tree parent's; then the idom's */
	size_t parent_cap;
	struct dom_pairs edges;  /* edges between numbered nodes that are not tree edges */
	struct dom_pairs shared; /* sinks' predecessors after the first */
	uint32_t *ancestor;      /* [n + 1], step 3: the link-eval forest, 0 a forest root */
	uint32_t *best;          /* [n + 1], step 3: least semidominator on the path */
	uint32_t *path;          /* compress()'s stack, grown as deep as a compression goes */
	size_t path_cap;
	struct dfs_entry {
		uint32_t node, from;
	} *stack;
	size_t nstack, stack_cap;
	uint32_t expanding;      /* number of the node whose successors are being emitted */
	struct dom_emitted {
		uint32_t v;
		bool sink;
	} *batch;                /* the expanding node's successors, as emitted */
	size_t nbatch, batch_cap;
	int status;
};

static int add_pair(struct dom_pairs *p, uint32_t to, uint32_t from)
{
	uint64_t *e = hr_array_push((void **)&p->items, &p->n, &p->cap, sizeof(*e));

	if (!e)
		return HR_ENOMEM;
	*e = pair(to, from);
	return HR_OK;
}

/* --- 1. depth-first numbering ------------------------------------------------------- */

static void emit_push(void *ctx, uint32_t v, bool sink);

/* The successors taken so far, looked at in the order they came. */
static void flush_batch(struct dom_run *r)
{
	for (size_t i = 0; i < r->nbatch; i++)
		emit_push(r, r->batch[i].v, r->batch[i].sink);
	r->nbatch = 0;
}

/* The same, from emit_later(): rare, and kept out of it (inlined, it cost a fifth of the search). */
__attribute__((noinline, cold)) static void flush_full_batch(struct dom_run *r)
{
	flush_batch(r);
}

/*
 * A successor as emitted: its number slot prefetched, looked at once the node's
 * successors are all in (each slot a likely cache miss: together, they overlap), or
 * DOM_BATCH_MAX of them (a slice of a million pointers would need 8 MB to hold them).
 */
static void emit_later(void *ctx, uint32_t v, bool sink)
{
	struct dom_run *r = ctx;
	struct dom_emitted *e;

	if (v >= r->g->nnodes || r->status)
		return;
	if (r->nbatch == DOM_BATCH_MAX)
		flush_full_batch(r);
	e = hr_array_push((void **)&r->batch, &r->nbatch, &r->batch_cap, sizeof(*e));
	if (!e) {
		r->status = HR_ENOMEM;
		return;
	}
	*e = (struct dom_emitted){ v, sink };
	__builtin_prefetch(&r->t->number[v]);
}

static void emit_push(void *ctx, uint32_t v, bool sink)
{
	struct dom_run *r = ctx;
	uint32_t *number = r->t->number, x;
	struct dfs_entry *e;

	if (v >= r->g->nnodes || r->status)
		return;
	x = number[v];
	if (sink && (!x || (x & HR_DOM_SINK))) {
		if (!x) {
			number[v] = HR_DOM_SINK | r->expanding;
			r->t->nsinks++;
		} else if ((x & ~HR_DOM_SINK) != r->expanding) {
			r->status = add_pair(&r->shared, v, r->expanding);
		}
		return;
	}
	if (x) { /* numbered before the node being expanded: not its tree child */
		if (x != r->expanding)
			r->status = add_pair(&r->edges, x, r->expanding);
		return;
	}
	e = hr_array_push((void **)&r->stack, &r->nstack, &r->stack_cap, sizeof(*e));
	if (!e) {
		r->status = HR_ENOMEM;
		return;
	}
	*e = (struct dfs_entry){ v, r->expanding };
}

static int number_nodes(struct dom_run *r)
{
	uint32_t *number = r->t->number;

	emit_push(r, 0, false);
	while (r->nstack && !r->status) {
		struct dfs_entry e = r->stack[--r->nstack];
		uint32_t x = number[e.node];
		int rc;

		if (x) { /* numbered since it was pushed: this edge is not its tree edge */
			if (!(x & HR_DOM_SINK) && x != e.from && r->parent[x] != e.from)
				r->status = add_pair(&r->edges, x, e.from);
			continue;
		}
		if (hr_array_reserve((void **)&r->parent, &r->parent_cap, (size_t)r->n + 2,
				     sizeof(*r->parent)))
			return HR_ENOMEM;
		number[e.node] = ++r->n;
		r->parent[r->n] = e.from;
		r->expanding = r->n;
		if ((rc = r->g->successors(r->g->ctx, e.node, emit_later, r)))
			return rc;
		flush_batch(r);
		if (r->nstack && r->g->next) /* most often, the last successor pushed */
			r->g->next(r->g->ctx, r->stack[r->nstack - 1].node);
	}
	return r->status;
}

/* --- 3. semidominators ---------------------------------------------------------------- */

/*
 * Path compression of v's path in the link-eval forest: each node on it ends up pointing
 * at the last node below the forest root, its best the least on the way. Lengauer and
 * Tarjan's recursive compress(), unrolled with r->path as stack.
 */
static int compress(struct dom_run *r, uint32_t v)
{
	uint32_t *anc = r->ancestor, *best = r->best;
	size_t npath = 0;

	for (uint32_t x = v; anc[anc[x]] != 0; x = anc[x]) {
		if (npath == r->path_cap &&
		    hr_array_reserve((void **)&r->path, &r->path_cap, npath + 1, sizeof(*r->path)))
			return HR_ENOMEM;
		r->path[npath++] = x;
	}
	while (npath > 0) {
		uint32_t y = r->path[--npath], a = anc[y];

		if (best[a] < best[y])
			best[y] = best[a];
		anc[y] = anc[a];
	}
	return HR_OK;
}

/*
 * The least semidominator on v's path, or v itself when it is not linked yet (numbered
 * lower than the node being processed, it is its own semidominator's bound);
 * HR_DOM_NONE when out of memory.
 */
static uint32_t eval(struct dom_run *r, uint32_t v)
{
	if (r->ancestor[v] == 0)
		return v;
	if (compress(r, v))
		return HR_DOM_NONE;
	return r->best[v];
}

static int compute_semi(struct dom_run *r)
{
	uint64_t *e = r->edges.items;
	size_t k = r->edges.n;

	for (uint32_t w = r->n; w >= 2; w--) {
		/* the tree parent, not linked yet (it is numbered lower), evaluates to itself */
		uint32_t s = r->parent[w];
		size_t end = k;

		for (; k > 0 && pair_to(e[k - 1]) == w; k--) {
			uint32_t u = eval(r, pair_from(e[k - 1]));

			if (u == HR_DOM_NONE)
				return HR_ENOMEM;
			if (u < s)
				s = u;
		}
		if (k < end)
			e[k] = pair(w, s); /* for step 4 */
		r->best[w] = s;
		r->ancestor[w] = r->parent[w]; /* link */
	}
	return HR_OK;
}

/* --- 4. immediate dominators ---------------------------------------------------------- */

static void compute_idom(struct dom_run *r)
{
	uint32_t *idom = r->parent; /* a node's parent is read before its idom replaces it */
	const uint64_t *e = r->edges.items;
	size_t k = 0;

	idom[1] = 0;
	for (uint32_t w = 2; w <= r->n; w++) {
		uint32_t d = r->parent[w], semi = d;

		while (k < r->edges.n && pair_to(e[k]) < w)
			k++;
		if (k < r->edges.n && pair_to(e[k]) == w)
			semi = pair_from(e[k]);
		while (d > semi)
			d = idom[d];
		idom[w] = d;
	}
}

/* --- 5. sinks with several predecessors ------------------------------------------------ */

static uint32_t nearest_common(const uint32_t *idom, uint32_t a, uint32_t b)
{
	while (a != b) {
		if (a > b)
			a = idom[a];
		else
			b = idom[b];
	}
	return a;
}

static int place_shared_sinks(struct dom_run *r)
{
	const uint64_t *e = r->shared.items; /* sorted in place */
	uint32_t *number = r->t->number;

	if (hr_sort_u64(r->shared.items, r->shared.n))
		return HR_ENOMEM;
	/* each sink's predecessors, from the last (the highest number) down */
	for (size_t end = r->shared.n, i; end > 0; end = i) {
		uint32_t sink = pair_to(e[end - 1]), d = pair_from(e[end - 1]);

		for (i = end - 1; i > 0 && pair_to(e[i - 1]) == sink; i--)
			d = nearest_common(r->parent, d, pair_from(e[i - 1]));
		d = nearest_common(r->parent, d, number[sink] & ~HR_DOM_SINK);
		number[sink] = HR_DOM_SINK | d;
	}
	return HR_OK;
}

/* --- 6. numbers to nodes ------------------------------------------------------------- */

uint32_t *hr_dom_tree_order(const struct hr_dom_tree *t)
{
	uint32_t *order = malloc((size_t)t->nreached * sizeof(*order) + 1);

	if (!order)
		return NULL;
	for (uint32_t v = 0; v < t->nnodes; v++) {
		uint32_t x = t->number[v];

		if (x && !(x & HR_DOM_SINK))
			order[x - 1] = v;
	}
	return order;
}

static int map_numbers(struct dom_run *r)
{
	struct hr_dom_tree *t = r->t;
	uint32_t *idom = realloc(r->parent, ((size_t)r->n + 1) * sizeof(*idom)), *order;

	if (idom)
		r->parent = idom; /* given back what the doubling left over */
	t->idom = r->parent;
	r->parent = NULL;
	t->nreached = r->n;
	if (!(order = hr_dom_tree_order(t)))
		return HR_ENOMEM;
	t->idom[0] = HR_DOM_NONE;
	t->idom[1] = HR_DOM_NONE;
	for (uint32_t x = 2; x <= r->n; x++)
		t->idom[x] = order[t->idom[x] - 1];
	for (uint32_t v = 0; v < t->nnodes; v++)
		if (t->number[v] & HR_DOM_SINK)
			t->number[v] = HR_DOM_SINK | order[(t->number[v] & ~HR_DOM_SINK) - 1];
	free(order);
	return HR_OK;
}

/* --- the whole ------------------------------------------------------------------------ */

static int link_and_place(struct dom_run *r)
{
	size_t n = (size_t)r->n + 1;
	int rc;

	free(r->stack);
	r->stack = NULL;
	if (hr_sort_u64(r->edges.items, r->edges.n))
		return HR_ENOMEM;
	r->ancestor = calloc(n, sizeof(*r->ancestor));
	r->best = malloc(n * sizeof(*r->best));
	if (!r->ancestor || !r->best)
		return HR_ENOMEM;
	if ((rc = compute_semi(r)))
		return rc;
	free(r->ancestor);
	free(r->best);
	free(r->path);
	r->ancestor = r->best = r->path = NULL;
	compute_idom(r);
	free(r->edges.items);
	r->edges.items = NULL;
	if ((rc = place_shared_sinks(r)))
		return rc;
	return map_numbers(r);
}

int hr_dominators_compute(const struct hr_dom_graph *g, struct hr_dom_tree *tree,
			  struct hr_error *err)
{
	struct dom_run r = { .g = g, .t = tree };
	int rc = HR_OK;

	*tree = (struct hr_dom_tree){ .nnodes = g->nnodes };
	if (!g->nnodes)
		return HR_OK;
	if (g->nnodes > HR_DOM_NODES_MAX) {
		hr_error_set(err, HR_EUSAGE, "%u nodes: too many for the dominator tree", g->nnodes);
		return HR_EUSAGE;
	}
	if (!(tree->number = hr_calloc_faulted(g->nnodes, sizeof(*tree->number))))
		rc = HR_ENOMEM;
	if (!rc && !(rc = number_nodes(&r)))
		rc = link_and_place(&r);
	free(r.stack);
	free(r.batch);
	free(r.path);
	free(r.parent);
	free(r.ancestor);
	free(r.best);
	free(r.edges.items);
	free(r.shared.items);
	if (rc) {
		hr_dom_tree_release(tree);
		if (rc == HR_ENOMEM)
			hr_error_set(err, rc, "out of memory for the dominator tree of %u nodes",
				     g->nnodes);
	}
	return rc;
}

uint32_t hr_dom_tree_idom(const struct hr_dom_tree *t, uint32_t v)
{
	uint32_t x = v < t->nnodes ? t->number[v] : 0;

	if (x & HR_DOM_SINK)
		return x & ~HR_DOM_SINK;
	return x ? t->idom[x] : HR_DOM_NONE;
}

void hr_dom_tree_release(struct hr_dom_tree *tree)
{
	free(tree->number);
	free(tree->idom);
	*tree = (struct hr_dom_tree){ 0 };
}
