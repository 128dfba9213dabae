/* SPDX-License-Identifier: Apache-2.0 */
/*
 * heap_graph.c - the heap as a graph for the dominator tree (see dominators.h): a
 * virtual root, the root variables of the chain tree, the heap objects; and the
 * retained size of each.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "heapref/dominators.h"

struct hr_heap_graph {
	const struct hr_dump *dump;
	uint32_t nroots;          /* root variables: nodes 1 .. nroots */
	uint32_t nnodes;
	uint32_t *root_chain;     /* [nroots + 1]: the chain tree node of root variable k */
	uint64_t *edge_off;       /* [nroots + 2]: root k's targets are edge_obj[edge_off[k] ..) */
	uint32_t *edge_obj;
	struct hr_graph_reader reader; /* hr_heap_graph_successors()'s */
};

struct hr_heap_dominators {
	struct hr_heap_graph *g;
	const struct hr_dump *dump;
	uint32_t nroots, nnodes;  /* the graph's */
	uint32_t *root_chain;
	struct hr_dom_tree tree;
	/* by number (hr_dom_tree): a sink retains itself alone */
	uint64_t *retained_bytes;   /* [tree.nreached + 1] */
	uint32_t *retained_objects; /* fewer than 2^31 objects: 4 bytes a node, not 8 */
};

uint32_t hr_heap_dom_count(const struct hr_heap_dominators *hd)
{
	return hd->nnodes;
}

uint32_t hr_heap_dom_root_count(const struct hr_heap_dominators *hd)
{
	return hd->nroots;
}

uint32_t hr_heap_dom_object_node(const struct hr_heap_dominators *hd, uint32_t obj)
{
	return hd->nroots + 1 + obj;
}

struct hr_heap_graph *hr_heap_dom_graph(const struct hr_heap_dominators *hd)
{
	return hd->g;
}

uint32_t hr_heap_dom_inner_count(const struct hr_heap_dominators *hd)
{
	return hd->tree.nreached;
}

uint32_t hr_heap_dom_inner_index(const struct hr_heap_dominators *hd, uint32_t id)
{
	uint32_t x = id < hd->nnodes ? hd->tree.number[id] : 0;

	return x && !(x & HR_DOM_SINK) ? x - 1 : HR_DOM_NONE;
}

uint32_t hr_heap_dom_inner_parent(const struct hr_heap_dominators *hd, uint32_t k)
{
	uint32_t d = k < hd->tree.nreached ? hd->tree.idom[k + 1] : HR_DOM_NONE;

	return d == HR_DOM_NONE ? HR_DOM_NONE : hd->tree.number[d] - 1;
}

int hr_heap_dom_walk_start(const struct hr_heap_dominators *hd, struct hr_dom_walk *w)
{
	*w = (struct hr_dom_walk){ .hd = hd, .order = hr_dom_tree_order(&hd->tree) };
	return w->order ? HR_OK : HR_ENOMEM;
}

uint32_t hr_heap_dom_walk_next(struct hr_dom_walk *w)
{
	const struct hr_dom_tree *t = &w->hd->tree;

	if (w->cursor < t->nreached)
		return w->order[w->cursor++];
	/* then the sinks, by node: each after its dominator, which is numbered */
	for (uint64_t v = w->cursor - t->nreached; v < t->nnodes; v++)
		if (t->number[v] & HR_DOM_SINK) {
			w->cursor = t->nreached + v + 1;
			return (uint32_t)v;
		}
	w->cursor = t->nreached + (uint64_t)t->nnodes;
	return HR_DOM_NONE;
}

void hr_heap_dom_walk_end(struct hr_dom_walk *w)
{
	free(w->order);
	w->order = NULL;
}

/* What node v retains, in bytes: as hr_heap_dom_node(), without the rest. */
static uint64_t retained_bytes_of(const struct hr_heap_dominators *hd, uint32_t v)
{
	uint32_t x = hd->tree.number[v];

	if (x & HR_DOM_SINK) /* a root without edges is a sink too: nothing */
		return v > hd->nroots ? hr_dump_object(hd->dump, v - hd->nroots - 1).size : 0;
	return x ? hd->retained_bytes[x] : 0;
}

/*
 * Child c, retaining bytes, offered as the biggest child of the node numbered d + 1:
 * taken if it has none yet (set's bit d) or c retains more (ties: the lower node).
 */
static void offer_child(const struct hr_heap_dominators *hd, uint32_t *big, uint64_t *set,
			uint32_t d, uint32_t c, uint64_t bytes)
{
	uint64_t b;

	if (hr_bit_get(set, d)) {
		b = retained_bytes_of(hd, big[d]);
		if (bytes < b || (bytes == b && c > big[d]))
			return;
	}
	big[d] = c;
	hr_bit_set(set, d);
}

/*
 * By number, not by node as hr_heap_dom_node() would: the numbered children's retained
 * sizes are read in order, and a child's dominator is mostly numbered just before it.
 * The answer is written over the map from numbers to nodes (hr_dom_tree_order()), which
 * the loop over numbers reads just ahead of it: entry x - 1 (the node of number x) is
 * read at x, and written only later, by x's children, numbered higher. Which entries
 * hold an answer is kept in a bitmap.
 */
uint32_t *hr_heap_dom_biggest_children(const struct hr_heap_dominators *hd)
{
	const struct hr_dom_tree *t = &hd->tree;
	uint32_t *big = hr_dom_tree_order(t);
	uint64_t *set = hr_calloc_faulted(hr_bit_words(t->nreached) + 1, sizeof(*set));

	if (!big || !set) {
		free(big);
		free(set);
		return NULL;
	}
	for (uint32_t x = 2; x <= t->nreached; x++)
		offer_child(hd, big, set, t->number[t->idom[x]] - 1, big[x - 1],
			    hd->retained_bytes[x]);
	for (uint32_t v = hd->nroots + 1; v < hd->nnodes; v++) {
		uint32_t x = t->number[v];

		if (x & HR_DOM_SINK)
			offer_child(hd, big, set, t->number[x & ~HR_DOM_SINK] - 1, v,
				    hr_dump_object(hd->dump, v - hd->nroots - 1).size);
	}
	for (uint32_t k = 0; k < t->nreached; k++)
		if (!hr_bit_get(set, k))
			big[k] = HR_DOM_NONE;
	free(set);
	return big;
}

uint64_t hr_heap_dom_object_size(const struct hr_heap_dominators *hd, uint32_t obj)
{
	return hr_dump_object(hd->dump, obj).size;
}

uint64_t hr_heap_dom_object_addr(const struct hr_heap_dominators *hd, uint32_t obj)
{
	return hr_dump_object(hd->dump, obj).addr;
}

uint32_t hr_heap_dom_idom(const struct hr_heap_dominators *hd, uint32_t id)
{
	return hr_dom_tree_idom(&hd->tree, id);
}

struct hr_dom_node hr_heap_dom_node(const struct hr_heap_dominators *hd, uint32_t id)
{
	struct hr_dom_node n = { .root = HR_CHAINS_NONE, .object = UINT32_MAX,
				 .idom = HR_DOM_NONE };
	uint32_t x;

	if (id >= hd->nnodes)
		return n;
	if (id >= 1 && id <= hd->nroots)
		n.root = hd->root_chain[id];
	else if (id > hd->nroots)
		n.object = id - hd->nroots - 1;
	n.idom = hr_dom_tree_idom(&hd->tree, id);
	x = hd->tree.number[id];
	if (x & HR_DOM_SINK) {
		n.retained_bytes = hr_dump_object(hd->dump, n.object).size;
		n.retained_objects = 1;
	} else if (x) {
		n.retained_bytes = hd->retained_bytes[x];
		n.retained_objects = hd->retained_objects[x];
	}
	return n;
}

/* --- building the graph ----------------------------------------------------------------- */

/* Root variables: the roots of the chain tree, numbered 1.. in chain node order. */
static int number_roots(struct hr_heap_graph *hd, const struct hr_chains *tree,
			uint32_t *root_of_chain)
{
	size_t n = hr_chains_count(tree);

	hd->root_chain = malloc((n + 1) * sizeof(*hd->root_chain));
	if (!hd->root_chain)
		return HR_ENOMEM;
	for (uint32_t id = 1; id < n; id++) {
		root_of_chain[id] = 0;
		if (hr_chains_node(tree, id)->parent == HR_CHAINS_TOP) {
			root_of_chain[id] = ++hd->nroots;
			hd->root_chain[hd->nroots] = id;
		}
	}
	return HR_OK;
}

/* Root edges e[0..n) as a table by root variable (a counting sort). */
static int group_root_edges(struct hr_heap_graph *hd, const struct hr_root_edge *e, size_t n,
			    const uint32_t *root_of_chain, size_t nchains)
{
	hd->edge_off = calloc((size_t)hd->nroots + 2, sizeof(*hd->edge_off));
	hd->edge_obj = malloc(n * sizeof(*hd->edge_obj) + 1);
	if (!hd->edge_off || !hd->edge_obj)
		return HR_ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (e[i].node < nchains && root_of_chain[e[i].node])
			hd->edge_off[root_of_chain[e[i].node] + 1]++;
	for (uint32_t k = 1; k <= hd->nroots + 1; k++)
		hd->edge_off[k] += hd->edge_off[k - 1];
	for (size_t i = 0; i < n; i++)
		if (e[i].node < nchains && root_of_chain[e[i].node])
			hd->edge_obj[hd->edge_off[root_of_chain[e[i].node]]++] = e[i].obj;
	for (uint32_t k = hd->nroots; k >= 1; k--) /* starts moved to the next: shift back */
		hd->edge_off[k] = hd->edge_off[k - 1];
	hd->edge_off[0] = 0;
	return HR_OK;
}

/* The objects an object's pointer words lead to, by the dump's bitmaps. */
static int object_successors(const struct hr_heap_graph *hd, struct hr_graph_reader *rd,
			     uint32_t obj, hr_dom_emit_fn *emit, void *emit_ctx)
{
	struct hr_object o = hr_dump_object(hd->dump, obj);
	unsigned ps = hr_dump_params(hd->dump)->ptr_size;
	uint64_t nwords = o.size / ps;

	if (hr_array_reserve((void **)&rd->words, &rd->words_cap, hr_bit_words(nwords) + 1,
			     sizeof(*rd->words)))
		return HR_ENOMEM;
	hr_dump_ptr_bits_at(hd->dump, o.addr, nwords, rd->words);
	for (uint64_t w = hr_bit_next(rd->words, 0, nwords); w < nwords;
	     w = hr_bit_next(rd->words, w + 1, nwords)) {
		bool leaf;
		int64_t j = hr_dump_object_leaf_at(hd->dump, hr_dump_word(hd->dump, o.data + w * ps),
						   &leaf);

		if (j < 0)
			continue;
		if (rd->prefetch && !leaf) /* see hr_heap_graph_prefetch() */
			hr_dump_prefetch_object(hd->dump, (size_t)j, 0, HR_PREFETCH_ENTRY);
		emit(emit_ctx, hd->nroots + 1 + (uint32_t)j, leaf);
	}
	return HR_OK;
}

void hr_heap_graph_prefetch(void *ctx, uint32_t u)
{
	struct hr_heap_graph *hd = ctx;

	if (u > hd->nroots)
		hr_dump_prefetch_object(hd->dump, u - hd->nroots - 1, 0, HR_PREFETCH_CONTENTS);
}

int hr_heap_graph_successors_in(const struct hr_heap_graph *hd, struct hr_graph_reader *rd,
				uint32_t u, hr_dom_emit_fn *emit, void *emit_ctx)
{
	if (u == 0) {
		for (uint32_t k = 1; k <= hd->nroots; k++)
			emit(emit_ctx, k, false);
	} else if (u <= hd->nroots) {
		for (uint64_t i = hd->edge_off[u]; i < hd->edge_off[u + 1]; i++) {
			struct hr_object o = hr_dump_object(hd->dump, hd->edge_obj[i]);

			emit(emit_ctx, hd->nroots + 1 + hd->edge_obj[i],
			     hr_dump_span_pointer_free(hd->dump, o.addr, o.size));
		}
	} else {
		return object_successors(hd, rd, u - hd->nroots - 1, emit, emit_ctx);
	}
	return HR_OK;
}

int hr_heap_graph_successors(void *ctx, uint32_t u, hr_dom_emit_fn *emit, void *emit_ctx)
{
	struct hr_heap_graph *hd = ctx;

	return hr_heap_graph_successors_in(hd, &hd->reader, u, emit, emit_ctx);
}

void hr_graph_reader_release(struct hr_graph_reader *rd)
{
	free(rd->words);
	*rd = (struct hr_graph_reader){ 0 };
}

/*
 * Each node's size plus everything it dominates, by number: each object's size goes to
 * its own number, or a sink's to its dominator's; then, from the highest number down
 * (dominators are numbered lower), each number's total to its dominator's.
 */
static int sum_retained(struct hr_heap_dominators *hd)
{
	const struct hr_dom_tree *t = &hd->tree;
	uint64_t *bytes = hr_calloc_faulted((size_t)t->nreached + 1, sizeof(*bytes));
	uint32_t *objects = hr_calloc_faulted((size_t)t->nreached + 1, sizeof(*objects));

	hd->retained_bytes = bytes;
	hd->retained_objects = objects;
	if (!bytes || !objects)
		return HR_ENOMEM;
	for (uint32_t v = hd->nroots + 1; v < hd->nnodes; v++) {
		uint32_t x = t->number[v];

		if (x & HR_DOM_SINK)
			x = t->number[x & ~HR_DOM_SINK];
		if (x) {
			bytes[x] += hr_dump_object(hd->dump, v - hd->nroots - 1).size;
			objects[x]++;
		}
	}
	for (uint32_t x = t->nreached; x >= 2; x--) {
		uint32_t d = t->number[t->idom[x]];

		bytes[d] += bytes[x];
		objects[d] += objects[x];
	}
	return HR_OK;
}

struct hr_heap_graph *hr_heap_graph_of_edges(const struct hr_dump *dump,
					     const struct hr_chains *tree,
					     const struct hr_root_edge *edges, size_t nedges,
					     struct hr_error *err)
{
	struct hr_heap_graph *g = calloc(1, sizeof(*g));
	size_t nchains = hr_chains_count(tree);
	uint32_t *root_of_chain = malloc((nchains + 1) * sizeof(*root_of_chain));
	uint64_t nnodes;

	if (!g || !root_of_chain)
		goto nomem;
	g->dump = dump;
	g->reader.prefetch = true;
	if (number_roots(g, tree, root_of_chain) ||
	    group_root_edges(g, edges, nedges, root_of_chain, nchains))
		goto nomem;
	free(root_of_chain);
	nnodes = 1 + (uint64_t)g->nroots + hr_dump_object_count(dump);
	if (nnodes > HR_DOM_NODES_MAX) {
		hr_error_set(err, HR_EUSAGE, "%" PRIu64 " nodes: too many for the object graph",
			     nnodes);
		hr_heap_graph_free(g);
		return NULL;
	}
	g->nnodes = (uint32_t)nnodes;
	return g;
nomem:
	hr_error_set(err, HR_ENOMEM, "out of memory for the object graph");
	free(root_of_chain);
	hr_heap_graph_free(g);
	return NULL;
}

struct hr_heap_graph *hr_heap_graph_new(const struct hr_dump *dump, const struct hr_chains *tree,
				       const struct hr_scan_result *result, struct hr_error *err)
{
	size_t n;
	const struct hr_root_edge *e = hr_result_root_edges(result, &n);

	return hr_heap_graph_of_edges(dump, tree, e, n, err);
}

bool hr_heap_graph_same(const struct hr_heap_graph *a, const struct hr_heap_graph *b)
{
	size_t roots = (size_t)a->nroots + 1;

	if (a->dump != b->dump || a->nnodes != b->nnodes || a->nroots != b->nroots ||
	    memcmp(a->root_chain + 1, b->root_chain + 1, a->nroots * sizeof(*a->root_chain)) ||
	    memcmp(a->edge_off, b->edge_off, (roots + 1) * sizeof(*a->edge_off)))
		return false;
	return !memcmp(a->edge_obj, b->edge_obj, a->edge_off[roots] * sizeof(*a->edge_obj));
}

void hr_heap_graph_free(struct hr_heap_graph *g)
{
	if (!g)
		return;
	free(g->root_chain);
	free(g->edge_off);
	free(g->edge_obj);
	hr_graph_reader_release(&g->reader);
	free(g);
}

uint32_t hr_heap_graph_root_count(const struct hr_heap_graph *g)
{
	return g->nroots;
}

uint32_t hr_heap_graph_count(const struct hr_heap_graph *g)
{
	return g->nnodes;
}

uint32_t hr_heap_graph_root_chain(const struct hr_heap_graph *g, uint32_t k)
{
	return k >= 1 && k <= g->nroots ? g->root_chain[k] : HR_CHAINS_NONE;
}

uint32_t hr_heap_graph_root_node(const struct hr_heap_graph *g, uint32_t chain_root)
{
	for (uint32_t k = 1; k <= g->nroots; k++)
		if (g->root_chain[k] == chain_root)
			return k;
	return 0;
}

struct hr_heap_dominators *hr_heap_dominators_of(const struct hr_dump *dump,
						 struct hr_heap_graph *g, struct hr_error *err)
{
	struct hr_heap_dominators *hd = calloc(1, sizeof(*hd));

	if (!hd) {
		hr_heap_graph_free(g);
		hr_error_set(err, HR_ENOMEM, "out of memory for the dominator tree");
		return NULL;
	}
	hd->g = g;
	hd->dump = dump;
	hd->nroots = g->nroots;
	hd->nnodes = g->nnodes;
	hd->root_chain = g->root_chain;
	if (hr_dominators_compute(&(struct hr_dom_graph){ hd->nnodes, hr_heap_graph_successors,
							  g, hr_heap_graph_prefetch },
				  &hd->tree, err))
		goto fail;
	if (sum_retained(hd)) {
		hr_error_set(err, HR_ENOMEM, "out of memory for the retained sizes");
		goto fail;
	}
	return hd;
fail:
	hr_heap_dominators_free(hd);
	return NULL;
}

struct hr_heap_dominators *hr_heap_dominators_new(const struct hr_dump *dump,
						  const struct hr_chains *tree,
						  const struct hr_scan_result *result,
						  struct hr_error *err)
{
	struct hr_heap_graph *g = hr_heap_graph_new(dump, tree, result, err);

	return g ? hr_heap_dominators_of(dump, g, err) : NULL;
}

void hr_heap_dominators_free(struct hr_heap_dominators *hd)
{
	if (!hd)
		return;
	hr_heap_graph_free(hd->g);
	hr_dom_tree_release(&hd->tree);
	free(hd->retained_bytes);
	free(hd->retained_objects);
	free(hd);
}
