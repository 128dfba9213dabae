/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dominators.c - the dominator tree of any graph given by a successor callback (see
 * dominators.h): the semi-NCA algorithm of Georgiadis and Tarjan, on flat arrays indexed
 * by depth-first preorder, without recursion.
 *
 *   1. A depth-first search from the root numbers the reachable nodes 1..n in preorder
 *      and records each one's tree parent. (An explicit stack holding every successor
 *      pushed, popped last in first out, skipping nodes already numbered: its tree is
 *      a depth-first tree, which is all the algorithm needs.)
 *   2. The predecessors of each reachable node other than its tree parent, as preorder
 *      numbers, in one flat array, from the successors the search saw (kept meanwhile:
 *      the callback is asked once per node, which for the heap graph means reading the
 *      dump's bitmaps once).
 *   3. Semidominators, from the highest number down, with the link-eval forest of
 *      Lengauer and Tarjan's simple version (path compression, iterative: its stack
 *      grows only as deep as a compression goes; in the worst case, a ring of all the
 *      nodes, that is 4 bytes a node again).
 *   4. Immediate dominators, from the lowest number up: the nearest common ancestor, on
 *      the dominator tree built so far, of a node's tree parent and its semidominator.
 */
#include <stdlib.h>
#include <string.h>

#include "heapref/dominators.h"

struct dom_run {
	const struct hr_dom_graph *g;
	struct hr_dom_tree *t;
	uint32_t n;              /* nodes numbered so far */
	uint32_t *pre;           /* [nnodes]: node -> preorder number (1-based), 0 unvisited */
	uint32_t *parent;        /* [nnodes + 1]: by number, the tree parent's number */
	uint32_t *semi, *label, *ancestor; /* [n + 1], steps 3 and 4 */
	uint32_t *path;          /* compress()'s stack, grown as deep as a compression goes */
	size_t path_cap;
	uint32_t *succ;          /* step 1's successors (node ids), node by node in preorder */
	size_t nsucc, succ_cap;
	uint32_t *succ_end;      /* [nnodes + 1]: number w's successors end at succ[succ_end[w]] */
	uint32_t *pred_off;      /* [n + 2]: w's predecessors are preds[pred_off[w] ..) */
	uint32_t *preds;
	struct dfs_entry {
		uint32_t node, from;
	} *stack;
	size_t nstack, stack_cap;
	uint32_t expanding;      /* number of the node whose successors are being emitted */
	int status;
};

/* --- 1. depth-first numbering ------------------------------------------------------- */

static void emit_push(void *ctx, uint32_t v)
{
	struct dom_run *r = ctx;
	struct dfs_entry *e;
	uint32_t *s;

	if (v >= r->g->nnodes || r->status)
		return;
	if (r->expanding) { /* an edge from a numbered node, for step 2 */
		if (r->nsucc >= UINT32_MAX || !(s = hr_array_push((void **)&r->succ, &r->nsucc,
								  &r->succ_cap, sizeof(*s)))) {
			r->status = HR_ENOMEM;
			return;
		}
		*s = v;
	}
	if (r->pre[v])
		return;
	e = hr_array_push((void **)&r->stack, &r->nstack, &r->stack_cap, sizeof(*e));
	if (!e) {
		r->status = HR_ENOMEM;
		return;
	}
	*e = (struct dfs_entry){ v, r->expanding };
}

static int number_nodes(struct dom_run *r)
{
	emit_push(r, 0);
	while (r->nstack && !r->status) {
		struct dfs_entry e = r->stack[--r->nstack];
		int rc;

		if (r->pre[e.node])
			continue;
		r->pre[e.node] = ++r->n;
		r->t->order[r->n - 1] = e.node;
		r->parent[r->n] = e.from;
		r->expanding = r->n;
		if ((rc = r->g->successors(r->g->ctx, e.node, emit_push, r)))
			return rc;
		r->succ_end[r->n] = (uint32_t)r->nsucc;
	}
	return r->status;
}

/* --- 2. predecessors ---------------------------------------------------------------- */

/*
 * Predecessors by number, from the successors step 1 kept (then freed). The edges from
 * a node's tree parent are left out: step 3 starts each node's semidominator at its
 * parent, which is what they would give (most heap objects have no other predecessor,
 * so this keeps most of the edges out of memory).
 */
static int collect_preds(struct dom_run *r)
{
	uint32_t total;

	/* the successors as numbers, in place: the node -> number map is not needed after */
	for (size_t k = 0; k < r->nsucc; k++)
		r->succ[k] = r->pre[r->succ[k]];
	free(r->pre);
	r->pre = NULL;
	r->pred_off = calloc((size_t)r->n + 2, sizeof(*r->pred_off));
	if (!r->pred_off)
		return HR_ENOMEM;
	for (uint32_t w = 1, k = 0; w <= r->n; w++)
		for (; k < r->succ_end[w]; k++) {
			uint32_t to = r->succ[k];

			if (r->parent[to] != w)
				r->pred_off[to + 1]++;
		}
	for (uint32_t w = 1; w <= r->n + 1; w++)
		r->pred_off[w] += r->pred_off[w - 1];
	total = r->pred_off[r->n + 1];
	if (!(r->preds = malloc(((size_t)total + 1) * sizeof(*r->preds))))
		return HR_ENOMEM;
	for (uint32_t w = 1, k = 0; w <= r->n; w++)
		for (; k < r->succ_end[w]; k++) {
			uint32_t to = r->succ[k];

			if (r->parent[to] != w)
				r->preds[r->pred_off[to]++] = w;
		}
	/* each start moved to the next one's: shift back */
	for (uint32_t w = r->n; w >= 2; w--)
		r->pred_off[w] = r->pred_off[w - 1];
	r->pred_off[1] = 0;
	free(r->succ);
	free(r->succ_end);
	r->succ = r->succ_end = NULL;
	return HR_OK;
}

/* --- 3. semidominators ---------------------------------------------------------------- */

/*
 * Path compression of v's path in the link-eval forest: each node on it ends up pointing
 * at the last node below the forest root, its label the one of least semidominator on
 * the way. Lengauer and Tarjan's recursive compress(), unrolled with r->path as stack.
 */
static int compress(struct dom_run *r, uint32_t v)
{
	uint32_t *anc = r->ancestor, *label = r->label, *semi = r->semi;
	size_t npath = 0;

	for (uint32_t x = v; anc[anc[x]] != 0; x = anc[x]) {
		if (npath == r->path_cap &&
		    hr_array_reserve((void **)&r->path, &r->path_cap, npath + 1, sizeof(*r->path)))
			return HR_ENOMEM;
		r->path[npath++] = x;
	}
	while (npath > 0) {
		uint32_t y = r->path[--npath], a = anc[y];

		if (semi[label[a]] < semi[label[y]])
			label[y] = label[a];
		anc[y] = anc[a];
	}
	return HR_OK;
}

/* The label of v after compressing its path; HR_DOM_NONE when out of memory. */
static uint32_t eval(struct dom_run *r, uint32_t v)
{
	if (r->ancestor[v] == 0)
		return v;
	if (compress(r, v))
		return HR_DOM_NONE;
	return r->label[v];
}

static int compute_semi(struct dom_run *r)
{
	for (uint32_t w = 1; w <= r->n; w++) {
		r->semi[w] = w;
		r->label[w] = w;
		r->ancestor[w] = 0;
	}
	for (uint32_t w = r->n; w >= 2; w--) {
		/* the tree parent, not linked yet (it is numbered lower), evaluates to itself */
		r->semi[w] = r->parent[w];
		for (uint32_t k = r->pred_off[w]; k < r->pred_off[w + 1]; k++) {
			uint32_t u = eval(r, r->preds[k]);

			if (u == HR_DOM_NONE)
				return HR_ENOMEM;
			if (r->semi[u] < r->semi[w])
				r->semi[w] = r->semi[u];
		}
		r->ancestor[w] = r->parent[w]; /* link */
	}
	return HR_OK;
}

/* --- 4. immediate dominators ---------------------------------------------------------- */

/*
 * The tree's idom array is made only now, after step 3's memory that step 4 does not
 * need is freed: the peak is step 3's arrays, without it.
 */
static int compute_idom(struct dom_run *r)
{
	uint32_t *idom = r->ancestor; /* by number; the forest is no longer needed */
	size_t nnodes = r->g->nnodes;

	free(r->label);
	free(r->pred_off);
	free(r->preds);
	r->label = r->pred_off = r->preds = NULL;
	if (!(r->t->idom = malloc(nnodes * sizeof(*r->t->idom) + 1)))
		return HR_ENOMEM;
	for (size_t i = 0; i < nnodes; i++)
		r->t->idom[i] = HR_DOM_NONE;
	idom[1] = 0;
	for (uint32_t w = 2; w <= r->n; w++) {
		uint32_t d = r->parent[w];

		while (d > r->semi[w])
			d = idom[d];
		idom[w] = d;
	}
	for (uint32_t w = 2; w <= r->n; w++)
		r->t->idom[r->t->order[w - 1]] = r->t->order[idom[w] - 1];
	return HR_OK;
}

/* --- the whole ------------------------------------------------------------------------ */

static int alloc_tree(struct dom_run *r)
{
	size_t n = r->g->nnodes;

	r->t->order = malloc(n * sizeof(*r->t->order) + 1);
	r->pre = calloc(n + 1, sizeof(*r->pre));
	r->parent = malloc((n + 1) * sizeof(*r->parent));
	r->succ_end = malloc((n + 1) * sizeof(*r->succ_end));
	if (!r->t->order || !r->pre || !r->parent || !r->succ_end)
		return HR_ENOMEM;
	return HR_OK;
}

static int alloc_forest(struct dom_run *r)
{
	size_t n = (size_t)r->n + 1;

	r->semi = malloc(n * sizeof(*r->semi));
	r->label = malloc(n * sizeof(*r->label));
	r->ancestor = malloc(n * sizeof(*r->ancestor));
	if (!r->semi || !r->label || !r->ancestor)
		return HR_ENOMEM;
	r->ancestor[0] = 0;
	return HR_OK;
}

int hr_dominators_compute(const struct hr_dom_graph *g, struct hr_dom_tree *tree,
			  struct hr_error *err)
{
	struct dom_run r = { .g = g, .t = tree };
	int rc;

	*tree = (struct hr_dom_tree){ 0 };
	if (!g->nnodes)
		return HR_OK;
	if (!(rc = alloc_tree(&r)) && !(rc = number_nodes(&r))) {
		free(r.stack);
		r.stack = NULL;
		if (!(rc = collect_preds(&r)) && !(rc = alloc_forest(&r)) &&
		    !(rc = compute_semi(&r)) && !(rc = compute_idom(&r)))
			tree->nreached = r.n;
	}
	free(r.stack);
	free(r.pre);
	free(r.path);
	free(r.parent);
	free(r.semi);
	free(r.label);
	free(r.ancestor);
	free(r.pred_off);
	free(r.succ);
	free(r.succ_end);
	free(r.preds);
	if (rc) {
		hr_dom_tree_release(tree);
		if (rc == HR_ENOMEM)
			hr_error_set(err, rc, "out of memory for the dominator tree of %u nodes",
				     g->nnodes);
	}
	return rc;
}

void hr_dom_tree_release(struct hr_dom_tree *tree)
{
	free(tree->order);
	free(tree->idom);
	*tree = (struct hr_dom_tree){ 0 };
}
