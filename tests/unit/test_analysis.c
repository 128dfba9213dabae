/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_analysis.c - one analysis (analysis.h) of a hand-made heap (heapmodel.h) with a
 * binary made by hand (binary_fixture.h, gotypes.h): the scan keeps what the request
 * needs and nothing else, the phases are told in order, the dominator tree is kept only
 * when asked for, examples and views are made from the result, and every tree holds what
 * the roots reach.
 *
 * The heap, main.Buf{data []uint8} (24 B), three globals:
 *   main.a *main.Buf -> B (H, 24 B) -> data 64 B (H+0x1000)
 *   main.b *main.Buf -> B as well
 *   main.c *main.Buf -> C (H+0x18, 24 B) -> data 16 B (H+0x1040)
 * and G (H+0x2000, 32 B), garbage pointing to B. Reachable: 4 objects, 128 bytes. The
 * walk takes the globals in address order, so B and its data go to main.a; main.a and
 * main.b share B, so no single root dominates it: by dominator, B and its data (88 B)
 * are "$shared by several roots", C and its data (40 B) main.c's. The groups of shared
 * memory and the suspects are checked on it too.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "gotypes.h"
#include "heapmodel.h"

#define DATA UINT64_C(0x500000)
#define H HM_HEAP
#define B_ADDR H
#define C_ADDR (H + 0x18)
#define B_DATA (H + 0x1000)
#define C_DATA (H + 0x1040)

struct scene {
	struct heapmodel m;
	struct hr_binary *bin;
	uint32_t buf_type;   /* main.Buf */
	uint32_t uint8_type; /* uint8 */
	struct hm_run run;
};

static void shared_heap(struct scene *sc)
{
	struct go_types g;
	struct hr_error err = { 0 };
	uint32_t buf_ptr;

	gt_init(&g, "go1.26.8");
	sc->buf_type = gt_struct(&g, "main.Buf", 24, 0);
	binary_fixture_member(g.fx, sc->buf_type, "data", 0, g.bytes);
	buf_ptr = gt_ptr(&g, "*main.Buf", sc->buf_type, 0);
	binary_fixture_global(g.fx, "main.a", DATA, buf_ptr);
	binary_fixture_global(g.fx, "main.b", DATA + 8, buf_ptr);
	binary_fixture_global(g.fx, "main.c", DATA + 16, buf_ptr);
	sc->uint8_type = g.u8;
	if (!(sc->bin = binary_fixture_finish(g.fx, &err)))
		fail_msg("binary_fixture_finish: %s", err.msg);

	hm_init(&sc->m, "go1.26.8");
	hm_segment(&sc->m, HM_DATA, DATA, 24);
	hm_ptr(&sc->m, DATA, B_ADDR);
	hm_ptr(&sc->m, DATA + 8, B_ADDR);
	hm_ptr(&sc->m, DATA + 16, C_ADDR);
	hm_object(&sc->m, B_ADDR, 24);
	hm_ptr(&sc->m, B_ADDR, B_DATA);
	hm_word(&sc->m, B_ADDR + 8, 64);
	hm_word(&sc->m, B_ADDR + 16, 64);
	hm_object(&sc->m, C_ADDR, 24);
	hm_ptr(&sc->m, C_ADDR, C_DATA);
	hm_word(&sc->m, C_ADDR + 8, 16);
	hm_word(&sc->m, C_ADDR + 16, 16);
	hm_object(&sc->m, B_DATA, 64);
	hm_object(&sc->m, C_DATA, 16);
	hm_object(&sc->m, H + 0x2000, 32);
	hm_ptr(&sc->m, H + 0x2000, B_ADDR);
}

static void scene_run(struct scene *sc, const struct hr_analysis_request *rq)
{
	shared_heap(sc);
	hm_run_request(&sc->run, &sc->m, sc->bin, rq);
	hm_check_reach(&sc->m, &sc->run);
}

/* A scene whose binary g and heap sc->m are built: analysed with its dominator tree. */
static void scene_run_dominators(struct scene *sc, struct go_types *g)
{
	struct hr_error err = { 0 };

	if (!(sc->bin = binary_fixture_finish(g->fx, &err)))
		fail_msg("binary_fixture_finish: %s", err.msg);
	hm_run_request(&sc->run, &sc->m, sc->bin, &(struct hr_analysis_request){ .dominators = true });
	hm_check_reach(&sc->m, &sc->run);
}

static void scene_end(struct scene *sc)
{
	hm_run_release(&sc->run);
	hr_binary_free(sc->bin);
}

/* The heap object at addr: its index. */
static uint32_t object(const struct scene *sc, uint64_t addr)
{
	int64_t i = hr_dump_object_at(sc->run.dump, addr);

	assert_true(i >= 0);
	return (uint32_t)i;
}

/* The objects and bytes of every node under the root named name (view or tree). */
static void under_root(const struct hr_chains *t, const char *name, uint64_t *objects,
		       uint64_t *bytes)
{
	*objects = *bytes = 0;
	for (uint32_t id = 1; id < hr_chains_count(t); id++) {
		uint32_t top = id;

		while (hr_chains_node(t, top)->parent != HR_CHAINS_TOP)
			top = hr_chains_node(t, top)->parent;
		if (strcmp(hr_chains_name(t, hr_chains_node(t, top)->name), name))
			continue;
		*objects += hr_chains_node(t, id)->objects;
		*bytes += hr_chains_node(t, id)->bytes;
	}
}

/* Nothing asked for: the chains alone; no paths, types, edges, shares or trees kept. */
static void test_keeps_nothing_unasked(void **state)
{
	struct scene sc;
	size_t n;

	(void)state;
	scene_run(&sc, &(struct hr_analysis_request){ 0 });
	assert_false(hr_result_has_paths(sc.run.an.result));
	assert_int_equal(hr_result_reached_by(sc.run.an.result, object(&sc, B_DATA)).holder,
			 HR_SCAN_NOT_REACHED);
	assert_null(hr_result_root_edges(sc.run.an.result, &n));
	assert_int_equal(n, 0);
	assert_null(hr_result_shares(sc.run.an.result, &n));
	assert_int_equal(hr_result_type_of(sc.run.an.result, object(&sc, B_ADDR), &(bool){ 0 }), 0);
	assert_null(sc.run.an.dominators);
	assert_null(sc.run.an.view);
	assert_ptr_equal(hr_analysis_chains(&sc.run.an), sc.run.an.tree);
	/* a binary without a file: its limits alone are warned about (no runtime.types) */
	assert_int_equal(sc.run.an.nwarnings, 1);
	assert_string_equal(sc.run.an.warnings[0], hr_binary_limits(sc.bin));
	assert_non_null(strstr(sc.run.an.warnings[0], "runtime.types"));
	scene_end(&sc);
}

/* Paths: each object's holder, B's a root's word, its data B's. */
static void test_paths(void **state)
{
	struct scene sc;
	struct hr_reached_by b, data;

	(void)state;
	scene_run(&sc, &(struct hr_analysis_request){ .paths = true });
	assert_true(hr_result_has_paths(sc.run.an.result));
	b = hr_result_reached_by(sc.run.an.result, object(&sc, B_ADDR));
	data = hr_result_reached_by(sc.run.an.result, object(&sc, B_DATA));
	assert_int_equal(b.holder, HR_SCAN_BY_ROOT);
	assert_int_equal(data.holder, object(&sc, B_ADDR));
	assert_string_equal(hr_chains_name(sc.run.tree, hr_chains_node(sc.run.tree, b.node)->name),
			    "main.a");
	assert_int_equal(hr_result_reached_by(sc.run.an.result, object(&sc, H + 0x2000)).holder,
			 HR_SCAN_NOT_REACHED);
	scene_end(&sc);
}

/*
 * Chains without holders (what suspects and the views ask for): the same chain nodes,
 * each reached object's holder HR_SCAN_HOLDER_UNKNOWN, an unreached one's not reached.
 */
static void test_paths_without_holders(void **state)
{
	struct scene with, without;
	uint64_t addrs[] = { B_ADDR, B_DATA };

	(void)state;
	scene_run(&with, &(struct hr_analysis_request){ .paths = true });
	scene_run(&without, &(struct hr_analysis_request){ .view_wanted = true,
							   .view = HR_VIEW_BY_ALLOC });
	assert_true(hr_result_has_paths(without.run.an.result));
	for (size_t i = 0; i < sizeof(addrs) / sizeof(addrs[0]); i++) {
		struct hr_reached_by a = hr_result_reached_by(with.run.an.result,
							      object(&with, addrs[i]));
		struct hr_reached_by b = hr_result_reached_by(without.run.an.result,
							      object(&without, addrs[i]));

		assert_int_not_equal(a.node, HR_CHAINS_NONE);
		assert_string_equal(hr_chains_name(with.run.tree, hr_chains_node(with.run.tree, a.node)->name),
				    hr_chains_name(without.run.tree,
						   hr_chains_node(without.run.tree, b.node)->name));
		assert_int_equal(b.holder, HR_SCAN_HOLDER_UNKNOWN);
	}
	assert_int_equal(hr_result_reached_by(without.run.an.result, object(&without, H + 0x2000)).holder,
			 HR_SCAN_NOT_REACHED);
	scene_end(&with);
	scene_end(&without);
}

/* The object graph (why -n): every root word followed is an edge, main.b's too. */
static void test_graph_keeps_every_root_word(void **state)
{
	struct scene sc;
	const struct hr_root_edge *e;
	size_t n;
	int to_b = 0;

	(void)state;
	scene_run(&sc, &(struct hr_analysis_request){ .graph = true });
	e = hr_result_root_edges(sc.run.an.result, &n);
	assert_int_equal(n, 3);
	for (size_t i = 0; i < n; i++)
		to_b += e[i].obj == object(&sc, B_ADDR);
	assert_int_equal(to_b, 2);
	assert_null(sc.run.an.dominators);
	scene_end(&sc);
}

/* The dominator tree when asked for: the virtual root retains all that is reachable. */
static void test_dominators_kept_when_asked(void **state)
{
	struct scene sc;
	struct hr_dom_node all;

	(void)state;
	scene_run(&sc, &(struct hr_analysis_request){ .dominators = true });
	assert_non_null(sc.run.an.dominators);
	all = hr_heap_dom_node(sc.run.an.dominators, 0);
	assert_int_equal(all.retained_objects, 4);
	assert_int_equal(all.retained_bytes, 128);
	assert_null(sc.run.an.view);
	scene_end(&sc);
}

/*
 * The view by dominator: the dominator tree made for it, and freed once it is made (not
 * asked for itself); B and its data under "$shared by several roots", C's under main.c.
 */
static void test_view_by_dominator(void **state)
{
	struct scene sc;
	uint64_t objects, bytes;

	(void)state;
	scene_run(&sc, &(struct hr_analysis_request){ .view_wanted = true,
						       .view = HR_VIEW_BY_DOMINATOR });
	assert_null(sc.run.an.dominators);
	assert_non_null(sc.run.an.view);
	assert_ptr_equal(hr_analysis_chains(&sc.run.an), sc.run.an.view);
	under_root(sc.run.an.view, "$shared by several roots", &objects, &bytes);
	assert_int_equal(objects, 2);
	assert_int_equal(bytes, 88);
	under_root(sc.run.an.view, "main.c", &objects, &bytes);
	assert_int_equal(objects, 2);
	assert_int_equal(bytes, 40);
	hr_chains_totals(sc.run.an.view, &objects, &bytes);
	assert_int_equal(objects, 4);
	assert_int_equal(bytes, 128);
	scene_end(&sc);
}

/*
 * The view by type keeps each object's type: B as main.Buf, its data as an array of
 * uint8 (a slice's backing array); each object charged to a "type" node below its chain.
 */
static void test_view_by_type(void **state)
{
	struct scene sc;
	bool array = true;
	char *text;

	(void)state;
	scene_run(&sc, &(struct hr_analysis_request){ .view_wanted = true,
						       .view = HR_VIEW_BY_TYPE });
	assert_int_equal(hr_result_type_of(sc.run.an.result, object(&sc, B_ADDR), &array),
			 sc.buf_type);
	assert_false(array);
	assert_int_equal(hr_result_type_of(sc.run.an.result, object(&sc, B_DATA), &array),
			 sc.uint8_type);
	assert_true(array);
	text = hm_tree_text(sc.run.an.view);
	assert_string_equal(text,
			    "main.a -> data. ([]uint8) -> type []uint8: 1 64\n"
			    "main.a -> data. ([]uint8): 0 0\n"
			    "main.a -> type main.Buf: 1 24\n"
			    "main.a: 0 0\n"
			    "main.c -> data. ([]uint8) -> type []uint8: 1 16\n"
			    "main.c -> data. ([]uint8): 0 0\n"
			    "main.c -> type main.Buf: 1 24\n"
			    "main.c: 0 0\n");
	free(text);
	scene_end(&sc);
}

/* Examples: each node's objects offered, the biggest kept. */
static void test_examples(void **state)
{
	struct scene sc;
	const struct hr_chain_example *ex;
	uint32_t node;
	size_t n;

	(void)state;
	scene_run(&sc, &(struct hr_analysis_request){ .examples = 2 });
	assert_int_equal(hr_chains_examples_kept(sc.run.tree), 2);
	assert_true(hr_result_has_paths(sc.run.an.result)); /* examples need them */
	node = hr_result_reached_by(sc.run.an.result, object(&sc, C_DATA)).node;
	ex = hr_chains_examples(sc.run.tree, node, &n);
	assert_int_equal(n, 1);
	assert_int_equal(ex[0].addr, C_DATA);
	assert_int_equal(ex[0].size, 16);
	scene_end(&sc);
}

struct told {
	char phases[8][16];
	int n;
	uint64_t pass1_objects; /* what pass 1 had reached when told */
};

static void tell(void *ctx, const char *phase, const struct hr_analysis *an,
		 const struct hr_scan_summary *sum)
{
	struct told *t = ctx;

	(void)an;
	assert_true(t->n < 8);
	snprintf(t->phases[t->n++], sizeof(t->phases[0]), "%s", phase);
	if (!strcmp(phase, "pass 1"))
		t->pass1_objects = sum->typed_objects;
}

/* The phases, in order; the view and the dominator tree told only when made. */
static void test_phases_in_order(void **state)
{
	static const char *const want[] = { "checks", "pass 1", "pass 2", "dominators", "view" };
	struct told t = { .n = 0 };
	struct scene sc;

	(void)state;
	scene_run(&sc, &(struct hr_analysis_request){ .dominators = true, .view_wanted = true,
						       .view = HR_VIEW_BY_TYPE, .phase = tell,
						       .phase_ctx = &t });
	assert_int_equal(t.n, 5);
	for (int i = 0; i < 5; i++)
		assert_string_equal(t.phases[i], want[i]);
	assert_int_equal(t.pass1_objects, 4);
	assert_non_null(sc.run.an.dominators); /* asked for itself: kept */
	scene_end(&sc);
	memset(&t, 0, sizeof(t));
	scene_run(&sc, &(struct hr_analysis_request){ .phase = tell, .phase_ctx = &t });
	assert_int_equal(t.n, 3);
	assert_string_equal(t.phases[2], "pass 2");
	scene_end(&sc);
}

/* Whether a and b are the same tree: every node's dominator and retained size. */
static void assert_same_tree(const struct hr_heap_dominators *a, const struct hr_heap_dominators *b)
{
	assert_int_equal(hr_heap_dom_count(a), hr_heap_dom_count(b));
	for (uint32_t v = 0; v < hr_heap_dom_count(a); v++) {
		struct hr_dom_node x = hr_heap_dom_node(a, v), y = hr_heap_dom_node(b, v);

		assert_int_equal(x.idom, y.idom);
		assert_int_equal(x.retained_bytes, y.retained_bytes);
		assert_int_equal(x.retained_objects, y.retained_objects);
	}
}

/*
 * The tree made beside the scan (any number of threads, two processors) is the one made
 * after it (one thread): kept when the final graph is its graph, made again when not,
 * and freed when abandoned.
 */
static void test_dominators_made_beside_the_scan(void **state)
{
	struct scene beside, after;
	struct hr_heap_dominators *hd;
	struct hr_heap_dom_ahead *ahead;
	const struct hr_root_edge *edges;
	struct hr_error err = { 0 };
	bool kept = true;
	size_t n;

	(void)state;
	scene_run(&beside, &(struct hr_analysis_request){ .dominators = true });
	scene_run(&after, &(struct hr_analysis_request){ .dominators = true,
							 .scan = { .threads = 1 } });
	assert_int_equal(after.run.an.dominators_made, HR_DOM_MADE_AFTER);
	assert_int_equal(beside.run.an.dominators_made,
			 hr_cpus_usable() > 1 ? HR_DOM_MADE_BESIDE : HR_DOM_MADE_AFTER);
	assert_same_tree(beside.run.an.dominators, after.run.an.dominators);

	/* an edge the scan found after the roots: the tree made ahead without it is not kept */
	edges = hr_result_root_edges(after.run.an.result, &n);
	assert_true(n >= 2);
	ahead = hr_heap_dominators_start(after.run.dump, after.run.an.tree, edges, n - 1);
	assert_non_null(ahead);
	hd = hr_heap_dominators_finish(ahead, after.run.an.tree, after.run.an.result, &kept, &err);
	assert_non_null(hd);
	assert_false(kept);
	assert_same_tree(hd, after.run.an.dominators);
	hr_heap_dominators_free(hd);

	ahead = hr_heap_dominators_start(after.run.dump, after.run.an.tree, edges, n);
	hd = hr_heap_dominators_finish(ahead, after.run.an.tree, after.run.an.result, &kept, &err);
	assert_true(kept);
	assert_same_tree(hd, after.run.an.dominators);
	hr_heap_dominators_free(hd);

	hr_heap_dominators_abandon(hr_heap_dominators_start(after.run.dump, after.run.an.tree,
							    edges, n));
	hr_heap_dominators_abandon(NULL);
	scene_end(&beside);
	scene_end(&after);
}

/* A release after a failure, or twice, is safe: the analysis is empty after. */
static void test_release_is_idempotent(void **state)
{
	struct scene sc;

	(void)state;
	scene_run(&sc, &(struct hr_analysis_request){ .dominators = true, .examples = 1 });
	hr_analysis_release(&sc.run.an);
	assert_null(sc.run.an.tree);
	assert_null(sc.run.an.result);
	hr_analysis_release(&sc.run.an);
	scene_end(&sc);
}

/* The graph node of the root variable named name. */
static uint32_t root_node(const struct scene *sc, const char *name)
{
	const struct hr_heap_dominators *hd = sc->run.an.dominators;

	for (uint32_t k = 1; k <= hr_heap_dom_root_count(hd); k++) {
		uint32_t chain = hr_heap_graph_root_chain(hr_heap_dom_graph(hd), k);

		if (!strcmp(hr_chains_name(sc->run.an.tree,
					   hr_chains_node(sc->run.an.tree, chain)->name), name))
			return k;
	}
	fail_msg("no root %s", name);
	return 0;
}

/* main.a and main.b share B and its data: one group of the two, 88 bytes in 2 objects. */
static void test_shared_groups(void **state)
{
	struct scene sc;
	struct hr_shared_group *g;
	struct hr_error err = { 0 };
	size_t n;

	(void)state;
	scene_run(&sc, &(struct hr_analysis_request){ .dominators = true });
	assert_int_equal(hr_heap_dom_shared_groups(sc.run.an.dominators, 0, &g, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(g[0].nroots, 2);
	assert_false(g[0].more_roots);
	assert_int_equal(g[0].roots[0], root_node(&sc, "main.a"));
	assert_int_equal(g[0].roots[1], root_node(&sc, "main.b"));
	assert_int_equal(g[0].bytes, 88);
	assert_int_equal(g[0].objects, 2);
	assert_int_equal(g[0].tops, 1);
	assert_int_equal(g[0].biggest, hr_heap_dom_object_node(sc.run.an.dominators,
								object(&sc, B_ADDR)));
	assert_int_equal(g[0].top_nodes[0], g[0].biggest);
	hr_shared_groups_free(g, n);
	/* all the shared memory is under 100 bytes: with that minimum, no groups at all */
	assert_int_equal(hr_heap_dom_shared_groups(sc.run.an.dominators, 100, &g, &n, &err), 0);
	assert_int_equal(n, 0);
	hr_shared_groups_free(g, n);
	scene_end(&sc);
}

/*
 * An edge between two shared tops found twice, not one after the other: main.a and
 * main.b share X (a top); X and Z, under X, both point at T, which main.c also points
 * at, and W, main.d's alone, comes between them in node order (its edge into T a root
 * variable's). So T is a top of all four, reached from X's group twice. Two groups of
 * 32 bytes in 2 objects each: {a, b} with X (and Z), {a, b, c, d} with T (and V); equal
 * bytes, so the lower biggest node (X) first.
 */
static void test_shared_groups_edge_twice(void **state)
{
	const uint64_t x = H, w = H + 0x80, t = H + 0x100, z = H + 0x200, v = H + 0x300;
	const char *roots[] = { "main.a", "main.b", "main.c", "main.d" };
	const uint64_t holds[] = { x, x, t, w };
	struct go_types g;
	struct hr_error err = { 0 };
	struct scene sc = { 0 };
	struct hr_shared_group *groups;
	uint32_t pair_type, pair_ptr;
	size_t n;

	(void)state;
	gt_init(&g, "go1.26.8");
	pair_type = gt_struct(&g, "main.Pair", 16, 0);
	pair_ptr = gt_ptr(&g, "*main.Pair", pair_type, 0);
	binary_fixture_member(g.fx, pair_type, "p", 0, pair_ptr);
	binary_fixture_member(g.fx, pair_type, "q", 8, pair_ptr);
	hm_init(&sc.m, "go1.26.8");
	hm_segment(&sc.m, HM_DATA, DATA, 4 * 8);
	for (int k = 0; k < 4; k++) {
		binary_fixture_global(g.fx, roots[k], DATA + 8 * (uint64_t)k, pair_ptr);
		hm_ptr(&sc.m, DATA + 8 * (uint64_t)k, holds[k]);
	}
	for (uint64_t a = H; a <= v; a += 0x80)
		if (a != H + 0x180 && a != H + 0x280)
			hm_object(&sc.m, a, 16);
	hm_ptr(&sc.m, x, t);
	hm_ptr(&sc.m, x + 8, z);
	hm_ptr(&sc.m, w, t);
	hm_ptr(&sc.m, t, v);
	hm_ptr(&sc.m, z, t);
	scene_run_dominators(&sc, &g);
	assert_int_equal(hr_heap_dom_shared_groups(sc.run.an.dominators, 0, &groups, &n, &err), 0);
	assert_int_equal(n, 2);
	for (size_t k = 0; k < 2; k++) {
		assert_int_equal(groups[k].nroots, k ? 4 : 2);
		assert_false(groups[k].more_roots);
		for (uint8_t r = 0; r < groups[k].nroots; r++)
			assert_int_equal(groups[k].roots[r], root_node(&sc, roots[r]));
		assert_int_equal(groups[k].tops, 1);
		assert_int_equal(groups[k].bytes, 32);
		assert_int_equal(groups[k].objects, 2);
		assert_int_equal(groups[k].biggest, hr_heap_dom_object_node(sc.run.an.dominators,
									    object(&sc, k ? t : x)));
	}
	hr_shared_groups_free(groups, n);
	scene_end(&sc);
}

/*
 * Six globals main.g0 .. main.g5, each pointing at its own node of a ring of six: every
 * node is reached from all six by paths that meet nowhere before it, so each is a shared
 * top, and the tops form a cycle (the propagation's worklist). One group: four roots
 * named (the lowest), more_roots, six tops of 16 bytes.
 */
static void test_shared_groups_ring(void **state)
{
	struct go_types g;
	struct hr_error err = { 0 };
	struct scene sc = { 0 };
	struct hr_shared_group *groups;
	uint32_t node_type, node_ptr;
	size_t n;

	(void)state;
	gt_init(&g, "go1.26.8");
	node_type = gt_struct(&g, "main.Node", 16, 0);
	node_ptr = gt_ptr(&g, "*main.Node", node_type, 0);
	binary_fixture_member(g.fx, node_type, "next", 0, node_ptr);
	binary_fixture_member(g.fx, node_type, "n", 8, g.i64);
	hm_init(&sc.m, "go1.26.8");
	hm_segment(&sc.m, HM_DATA, DATA, 6 * 8);
	for (int k = 0; k < 6; k++) {
		char name[16];

		snprintf(name, sizeof(name), "main.g%d", k);
		binary_fixture_global(g.fx, name, DATA + 8 * (uint64_t)k, node_ptr);
		hm_ptr(&sc.m, DATA + 8 * (uint64_t)k, H + 0x20 * (uint64_t)k);
		hm_object(&sc.m, H + 0x20 * (uint64_t)k, 16);
		hm_ptr(&sc.m, H + 0x20 * (uint64_t)k, H + 0x20 * (uint64_t)((k + 1) % 6));
		hm_word(&sc.m, H + 0x20 * (uint64_t)k + 8, (uint64_t)k);
	}
	scene_run_dominators(&sc, &g);
	assert_int_equal(hr_heap_dom_shared_groups(sc.run.an.dominators, 0, &groups, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(groups[0].nroots, 4);
	assert_true(groups[0].more_roots);
	for (int k = 0; k < 4; k++) {
		char name[16];

		snprintf(name, sizeof(name), "main.g%d", k);
		assert_int_equal(groups[0].roots[k], root_node(&sc, name));
	}
	assert_int_equal(groups[0].tops, 6);
	assert_int_equal(groups[0].bytes, 6 * 16);
	assert_int_equal(groups[0].objects, 6);
	hr_shared_groups_free(groups, n);
	scene_end(&sc);
}

/*
 * Suspects over 30%: the shared B (88 of 128 bytes), piling up in its data (64 of 88:
 * over 70%), a slice of length 64 read from B's header; then main.c (40 bytes).
 */
static void test_suspects(void **state)
{
	struct scene sc;
	const struct hr_suspects *s;
	const struct hr_suspect *v;

	(void)state;
	scene_run(&sc, &(struct hr_analysis_request){ .suspects = true,
						       .threshold_percent = 30.0 });
	s = sc.run.an.suspects;
	assert_non_null(s);
	assert_int_equal(s->reachable_bytes, 128);
	assert_int_equal(s->threshold_bytes, 39); /* 38.4 rounded up */
	assert_int_equal(s->n, 2);
	v = &s->v[0];
	assert_int_equal(v->kind, HR_SUSPECT_SHARED);
	assert_int_equal(v->bytes, 88);
	assert_int_equal(v->nroots, 2);
	assert_string_equal(v->roots[0], "main.a");
	assert_string_equal(v->roots[1], "main.b");
	assert_int_equal(v->point.kind, HR_PILE_SLICE);
	assert_int_equal(v->point.addr, B_DATA);
	assert_int_equal(v->point.count, 64);
	assert_int_equal(v->point.bytes, 64);
	assert_int_equal(v->npath, 3); /* main.a, B, its data */
	assert_string_equal(v->path[0].type, "main.a");
	assert_int_equal(v->path[1].addr, B_ADDR);
	assert_string_equal(v->path[1].type, "main.Buf");
	assert_int_equal(v->path[2].addr, B_DATA);
	assert_int_equal(v->ntypes, 1);
	assert_string_equal(v->types[0].type, "[]uint8");
	assert_int_equal(v->types[0].bytes, 64);
	assert_int_equal(v->nexamples, 1);
	assert_int_equal(v->examples[0], B_DATA);
	v = &s->v[1];
	assert_int_equal(v->kind, HR_SUSPECT_ROOT);
	assert_int_equal(v->bytes, 40);
	assert_string_equal(v->roots[0], "main.c");
	assert_null(v->creator); /* a global: no goroutine */
	scene_end(&sc);

	/* over 70%, none */
	scene_run(&sc, &(struct hr_analysis_request){ .suspects = true,
						       .threshold_percent = 70.0 });
	assert_int_equal(sc.run.an.suspects->n, 0);
	scene_end(&sc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keeps_nothing_unasked),
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_paths_without_holders),
		cmocka_unit_test(test_graph_keeps_every_root_word),
		cmocka_unit_test(test_dominators_kept_when_asked),
		cmocka_unit_test(test_view_by_dominator),
		cmocka_unit_test(test_view_by_type),
		cmocka_unit_test(test_examples),
		cmocka_unit_test(test_phases_in_order),
		cmocka_unit_test(test_release_is_idempotent),
		cmocka_unit_test(test_dominators_made_beside_the_scan),
		cmocka_unit_test(test_shared_groups),
		cmocka_unit_test(test_shared_groups_ring),
		cmocka_unit_test(test_shared_groups_edge_twice),
		cmocka_unit_test(test_suspects),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
