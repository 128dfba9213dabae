/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_dominators.c - the dominator tree (src/dominators/dominators.c) on hand-built
 * graphs and on random ones, against a brute force: d dominates v exactly when v cannot
 * be reached from the root once d is taken out of the graph.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "heapref/dominators.h"

struct edge_list {
	uint32_t n;
	uint32_t *off; /* [n + 1] */
	uint32_t *to;
	const uint8_t *sink; /* [n] or NULL: the nodes emitted as sinks (they have no edges) */
};

static int list_successors(void *ctx, uint32_t u, hr_dom_emit_fn *emit, void *emit_ctx)
{
	const struct edge_list *g = ctx;

	for (uint32_t k = g->off[u]; k < g->off[u + 1]; k++)
		emit(emit_ctx, g->to[k], g->sink && g->sink[g->to[k]]);
	return HR_OK;
}

/* A graph of n nodes from pairs {u, v}. */
static struct edge_list make_graph(uint32_t n, const uint32_t (*edges)[2], size_t nedges)
{
	struct edge_list g = { n, calloc(n + 2, sizeof(uint32_t)), malloc((nedges + 1) * sizeof(uint32_t)),
			       NULL };
	uint32_t *fill = calloc(n + 1, sizeof(uint32_t));

	assert_non_null(g.off);
	assert_non_null(g.to);
	assert_non_null(fill);
	for (size_t i = 0; i < nedges; i++)
		g.off[edges[i][0] + 1]++;
	for (uint32_t u = 1; u <= n; u++)
		g.off[u] += g.off[u - 1];
	for (size_t i = 0; i < nedges; i++) {
		uint32_t u = edges[i][0];

		g.to[g.off[u] + fill[u]++] = edges[i][1];
	}
	free(fill);
	return g;
}

static void free_graph(struct edge_list *g)
{
	free(g->off);
	free(g->to);
}

/* Nodes reachable from 0 without passing through `removed` (UINT32_MAX: none). */
static void reach_without(const struct edge_list *g, uint32_t removed, uint8_t *seen)
{
	uint32_t *stack = malloc((g->off[g->n] + 2) * sizeof(uint32_t));
	size_t n = 0;

	assert_non_null(stack);
	memset(seen, 0, g->n);
	if (removed != 0) {
		seen[0] = 1;
		stack[n++] = 0;
	}
	while (n) {
		uint32_t u = stack[--n];

		for (uint32_t k = g->off[u]; k < g->off[u + 1]; k++) {
			uint32_t v = g->to[k];

			if (v != removed && !seen[v]) {
				seen[v] = 1;
				stack[n++] = v;
			}
		}
	}
	free(stack);
}

/* The immediate dominators by brute force: HR_DOM_NONE for the root and unreachable nodes. */
static uint32_t *brute_idom(const struct edge_list *g)
{
	uint32_t n = g->n;
	uint8_t *dom = calloc((size_t)n * n, 1); /* dom[d * n + v]: d dominates v */
	uint8_t *seen = malloc(n), *all = malloc(n);
	uint32_t *idom = malloc(n * sizeof(uint32_t));

	assert_non_null(dom);
	assert_non_null(seen);
	assert_non_null(all);
	assert_non_null(idom);
	reach_without(g, UINT32_MAX, all);
	for (uint32_t d = 0; d < n; d++) {
		reach_without(g, d, seen);
		for (uint32_t v = 0; v < n; v++)
			dom[(size_t)d * n + v] = all[v] && all[d] && (!seen[v] || v == d);
	}
	for (uint32_t v = 0; v < n; v++) {
		idom[v] = HR_DOM_NONE;
		if (v == 0 || !all[v])
			continue;
		/* the strict dominator that all the other strict dominators dominate */
		for (uint32_t d = 0; d < n; d++) {
			bool deepest = d != v && dom[(size_t)d * n + v];

			for (uint32_t e = 0; deepest && e < n; e++)
				if (e != v && e != d && dom[(size_t)e * n + v] && !dom[(size_t)e * n + d])
					deepest = false;
			if (deepest)
				idom[v] = d;
		}
	}
	free(dom);
	free(seen);
	free(all);
	return idom;
}

/* The dominator tree of g, which must be computed without failing. */
/* The search's hint: a node of the graph, never a sink (a sink is never searched from). */
static void check_next(void *ctx, uint32_t u)
{
	const struct edge_list *g = ctx;

	assert_true(u < g->n);
	assert_false(g->sink && g->sink[u]);
}

static struct hr_dom_tree compute(const struct edge_list *g)
{
	struct hr_dom_tree t;
	struct hr_error err = { 0 };

	assert_int_equal(hr_dominators_compute(&(struct hr_dom_graph){ .nnodes = g->n,
									.successors = list_successors,
									.ctx = (void *)g,
									.next = check_next },
					       &t, &err),
			 HR_OK);
	return t;
}

static void check_against_brute_force(const struct edge_list *g)
{
	struct hr_dom_tree t = compute(g);
	uint32_t *want = brute_idom(g);
	uint32_t reached = 0;

	for (uint32_t v = 0; v < g->n; v++) {
		uint32_t got = hr_dom_tree_idom(&t, v);

		if (want[v] != got)
			fail_msg("node %u: idom %u, brute force says %u", v, got, want[v]);
		reached += v == 0 || want[v] != HR_DOM_NONE;
	}
	assert_int_equal(t.nreached + t.nsinks, reached);
	assert_int_equal(t.number[0], 1); /* the root is numbered first */
	hr_dom_tree_release(&t);
	free(want);
}

static void test_diamond(void **state)
{
	/* 0 -> 1 -> {2, 3} -> 4 -> 5: 4's idom is 1, not 2 or 3 */
	static const uint32_t e[][2] = { { 0, 1 }, { 1, 2 }, { 1, 3 }, { 2, 4 }, { 3, 4 }, { 4, 5 } };
	struct edge_list g = make_graph(6, e, 6);
	struct hr_dom_tree t = compute(&g);

	(void)state;
	assert_int_equal(hr_dom_tree_idom(&t, 0), HR_DOM_NONE);
	assert_int_equal(hr_dom_tree_idom(&t, 4), 1);
	assert_int_equal(hr_dom_tree_idom(&t, 5), 4);
	assert_int_equal(hr_dom_tree_idom(&t, 2), 1);
	hr_dom_tree_release(&t);
	check_against_brute_force(&g);
	free_graph(&g);
}

static void test_shared_by_two_roots(void **state)
{
	/* the heap graph's shape: virtual root 0, two roots 1 and 2 sharing object 3, which
	 * holds 4; 1 alone holds 5. Neither root dominates 3: the virtual root does. */
	static const uint32_t e[][2] = { { 0, 1 }, { 0, 2 }, { 1, 3 }, { 2, 3 }, { 3, 4 }, { 1, 5 } };
	struct edge_list g = make_graph(6, e, 6);
	struct hr_dom_tree t = compute(&g);

	(void)state;
	assert_int_equal(hr_dom_tree_idom(&t, 3), 0);
	assert_int_equal(hr_dom_tree_idom(&t, 4), 3);
	assert_int_equal(hr_dom_tree_idom(&t, 5), 1);
	hr_dom_tree_release(&t);
	free_graph(&g);
}

static void test_cycles_self_loops_and_unreachable(void **state)
{
	/* 0 -> 1 <-> 2 -> 3 -> 1, 3 -> 3, 2 -> 4 -> 2, duplicates; 5 -> 6 unreachable */
	static const uint32_t e[][2] = { { 0, 1 }, { 1, 2 }, { 2, 1 }, { 2, 3 }, { 3, 1 },
					 { 3, 3 }, { 2, 4 }, { 4, 2 }, { 2, 3 }, { 5, 6 },
					 { 6, 1 } };
	struct edge_list g = make_graph(7, e, 11);

	(void)state;
	check_against_brute_force(&g);
	free_graph(&g);
}

/* The classic example of Lengauer and Tarjan's paper (13 nodes, R = 0). */
static void test_lengauer_tarjan_example(void **state)
{
	enum { R, A, B, C, D, E, F, G, H, I, J, K, L };
	static const uint32_t e[][2] = {
		{ R, A }, { R, B }, { R, C }, { A, D }, { B, A }, { B, D }, { B, E }, { C, F },
		{ C, G }, { D, L }, { E, H }, { F, I }, { G, I }, { G, J }, { H, E }, { H, K },
		{ I, K }, { J, I }, { K, I }, { K, R }, { L, H }
	};
	struct edge_list g = make_graph(13, e, sizeof(e) / sizeof(e[0]));
	struct hr_dom_tree t = compute(&g);

	(void)state;
	/* the paper's answer: I, K, E, H, A, B, C, D (and L's D) */
	assert_int_equal(hr_dom_tree_idom(&t, I), R);
	assert_int_equal(hr_dom_tree_idom(&t, K), R);
	assert_int_equal(hr_dom_tree_idom(&t, E), R);
	assert_int_equal(hr_dom_tree_idom(&t, H), R);
	assert_int_equal(hr_dom_tree_idom(&t, F), C);
	assert_int_equal(hr_dom_tree_idom(&t, G), C);
	assert_int_equal(hr_dom_tree_idom(&t, J), G);
	assert_int_equal(hr_dom_tree_idom(&t, L), D);
	assert_int_equal(hr_dom_tree_idom(&t, D), R);
	hr_dom_tree_release(&t);
	check_against_brute_force(&g);
	free_graph(&g);
}

static uint64_t xorshift(uint64_t *x)
{
	*x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
	return *x;
}

/*
 * Random graphs, each twice with sinks: once none flagged, once a third of the nodes
 * (the root never) made sinks: their edges left out, and flagged to the computation.
 */
static void test_random_graphs(void **state)
{
	uint64_t x = 0x9e3779b97f4a7c15u;

	(void)state;
	for (int round = 0; round < 600; round++) {
		uint32_t n = 2 + (uint32_t)(round % 40);
		size_t nedges = (size_t)n * (1 + round % 4), k = 0;
		uint32_t (*e)[2] = malloc(nedges * sizeof(*e));
		uint8_t *sink = calloc(n, 1);
		struct edge_list g;

		assert_non_null(e);
		assert_non_null(sink);
		for (uint32_t v = 1; round % 2 && v < n; v++)
			sink[v] = xorshift(&x) % 3 == 0;
		for (size_t i = 0; i < nedges; i++) {
			xorshift(&x);
			e[k][0] = (uint32_t)(x % n);
			e[k][1] = (uint32_t)((x >> 32) % n);
			k += !sink[e[k][0]];
		}
		g = make_graph(n, (const uint32_t(*)[2])e, k);
		g.sink = sink;
		check_against_brute_force(&g);
		free_graph(&g);
		free(sink);
		free(e);
	}
}

static void test_sinks(void **state)
{
	/* 0 -> 1 -> {2, 3}; 2 -> 4 (sink), 3 -> 4, 1 -> 5 (sink), 5 twice from 1; 6 (sink)
	 * from 2 only. 4's idom is 1 (neither 2 nor 3), 5's is 1, 6's is 2. */
	static const uint32_t e[][2] = { { 0, 1 }, { 1, 2 }, { 1, 3 }, { 2, 4 }, { 3, 4 },
					 { 1, 5 }, { 1, 5 }, { 2, 6 } };
	static const uint8_t sink[7] = { [4] = 1, [5] = 1, [6] = 1 };
	struct edge_list g = make_graph(7, e, sizeof(e) / sizeof(e[0]));
	struct hr_dom_tree t;

	(void)state;
	g.sink = sink;
	t = compute(&g);
	assert_int_equal(t.nreached, 4);
	assert_int_equal(t.nsinks, 3);
	assert_int_equal(hr_dom_tree_idom(&t, 4), 1);
	assert_int_equal(hr_dom_tree_idom(&t, 5), 1);
	assert_int_equal(hr_dom_tree_idom(&t, 6), 2);
	assert_int_equal(t.number[4] & HR_DOM_SINK, HR_DOM_SINK);
	hr_dom_tree_release(&t);
	check_against_brute_force(&g);
	free_graph(&g);
}

/*
 * A sink every node of a million-long chain points at: its idom is the chain's first
 * node. Folding its predecessors from the deepest up climbs one step for each; from
 * the first down it would climb the chain's depth for each (10^12 steps: the test
 * would not end).
 */
static void test_sink_shared_by_long_chain(void **state)
{
	const uint32_t n = 1000000, s = n - 1;
	uint32_t (*e)[2] = malloc(2 * (size_t)n * sizeof(*e));
	uint8_t *sink = calloc(n, 1);
	struct hr_dom_tree t;
	struct edge_list g;
	size_t k = 0;

	(void)state;
	assert_non_null(e);
	assert_non_null(sink);
	sink[s] = 1;
	for (uint32_t v = 0; v + 1 < s; v++) {
		e[k][0] = v, e[k++][1] = v + 1;
		e[k][0] = v + 1, e[k++][1] = s;
	}
	g = make_graph(n, (const uint32_t(*)[2])e, k);
	g.sink = sink;
	t = compute(&g);
	assert_int_equal(t.nreached, n - 1);
	assert_int_equal(t.nsinks, 1);
	assert_int_equal(hr_dom_tree_idom(&t, s), 1);
	assert_int_equal(hr_dom_tree_idom(&t, s - 1), s - 2);
	hr_dom_tree_release(&t);
	free_graph(&g);
	free(sink);
	free(e);
}

/*
 * A node with more successors than the search takes before it looks at them (4096):
 * 1 -> c (10,000 nodes, each also -> the next), 1 -> 10,000 sinks, then c's first
 * again and 1 itself. Every c and every sink has 1 as its idom.
 */
static void test_wide_node(void **state)
{
	const uint32_t w = 10000, n = 2 + 2 * w;
	uint32_t (*e)[2] = malloc(4 * (size_t)n * sizeof(*e));
	uint8_t *sink = calloc(n, 1);
	struct hr_dom_tree t;
	struct edge_list g;
	size_t k = 0;

	(void)state;
	assert_non_null(e);
	assert_non_null(sink);
	e[k][0] = 0, e[k++][1] = 1;
	for (uint32_t i = 0; i < w; i++)
		e[k][0] = 1, e[k++][1] = 2 + i;
	for (uint32_t i = 0; i < w; i++) {
		sink[2 + w + i] = 1;
		e[k][0] = 1, e[k++][1] = 2 + w + i;
	}
	e[k][0] = 1, e[k++][1] = 2;
	e[k][0] = 1, e[k++][1] = 1;
	for (uint32_t i = 0; i + 1 < w; i++)
		e[k][0] = 2 + i, e[k++][1] = 3 + i;
	g = make_graph(n, (const uint32_t(*)[2])e, k);
	g.sink = sink;
	t = compute(&g);
	assert_int_equal(t.nreached, 2 + w);
	assert_int_equal(t.nsinks, w);
	for (uint32_t v = 2; v < n; v++)
		if (hr_dom_tree_idom(&t, v) != 1)
			fail_msg("node %u: idom %u", v, hr_dom_tree_idom(&t, v));
	hr_dom_tree_release(&t);
	free_graph(&g);
	free(sink);
	free(e);
}

static void test_long_chain_does_not_recurse(void **state)
{
	/* 0 -> 1 -> ... -> n-1, each node also pointing back to the root: a million deep */
	const uint32_t n = 1000000;
	uint32_t (*e)[2] = malloc(2 * (size_t)n * sizeof(*e));
	struct hr_dom_tree t;
	struct edge_list g;
	size_t k = 0;

	(void)state;
	assert_non_null(e);
	for (uint32_t v = 0; v + 1 < n; v++) {
		e[k][0] = v, e[k++][1] = v + 1;
		e[k][0] = v + 1, e[k++][1] = 0;
	}
	g = make_graph(n, (const uint32_t(*)[2])e, k);
	t = compute(&g);
	assert_int_equal(t.nreached, n);
	for (uint32_t v = 1; v < n; v++)
		if (hr_dom_tree_idom(&t, v) != v - 1)
			fail_msg("node %u: idom %u", v, hr_dom_tree_idom(&t, v));
	hr_dom_tree_release(&t);
	free_graph(&g);
	free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_diamond),
		cmocka_unit_test(test_shared_by_two_roots),
		cmocka_unit_test(test_cycles_self_loops_and_unreachable),
		cmocka_unit_test(test_lengauer_tarjan_example),
		cmocka_unit_test(test_random_graphs),
		cmocka_unit_test(test_long_chain_does_not_recurse),
		cmocka_unit_test(test_sinks),
		cmocka_unit_test(test_sink_shared_by_long_chain),
		cmocka_unit_test(test_wide_node),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
