/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_scan_walk.c - the scan (both passes) on hand-made heaps: a heap dump built word
 * by word (heapmodel.h) and a binary made by hand (binary_fixture.h, gotypes.h), run
 * through the public APIs (hr_dump_open_bytes(), hr_analysis_run(), hr_chains_*). Each test
 * asserts the whole chain tree, every node with its own objects and bytes, and the
 * invariant: the tree holds exactly what the roots reach by the pointer words, as
 * heapmodel.c works it out without heapref.
 *
 *   - a linked list global: folded recursion, --full-chains, a node two globals reach
 *     charged once, to the shorter chain; garbage left unreachable;
 *   - struct fields, arrays ([0], [10+]), a slice's backing array, strings' bytes;
 *   - interfaces: the dynamic type from an eface's type word (runtime.types) and from
 *     an iface's itab (the dump's itab record), a pointer stored directly, a struct
 *     behind the data word, a type word no type has;
 *   - a Go <= 1.23 bucket map (hash<K,V>, buckets, an overflow bucket): $mapkey, $mapval;
 *   - Go >= 1.24 swiss maps, small (one group) and big (directory, tables, groups), with
 *     empty slots and slots with one of their words nil;
 *   - pass 2: unsafe.Pointer words (as Go's DWARF types them), a view from inside an
 *     object, data and bss words outside every global (named by symbol, or by offset);
 *   - an unsafe.Pointer typed by the malloc header of the object it points into;
 *   - frames: a function's variables (parameter, local), words no variable covers.
 *
 * Every expected tree is worked out by hand from the heap each test builds (see the
 * comments); the heaps use Go's size classes. Not covered: channels, closures, sync
 * containers, finalizers, location lists.
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
#define BSS UINT64_C(0x600000)
#define H HM_HEAP
#define RUNTIME_TYPES UINT64_C(0x480000)

/* One test's process: the binary's types (g) and memory (m), then the binary and a scan. */
struct scene {
	struct go_types g;
	struct heapmodel m;
	struct hr_binary *bin;
	struct hm_run run;
};

static void scene_begin(struct scene *sc, const char *go_version)
{
	gt_init(&sc->g, go_version);
	hm_init(&sc->m, go_version);
	sc->bin = NULL;
	memset(&sc->run, 0, sizeof(sc->run));
}

/* The binary, finished the first time it is asked for. */
static struct hr_binary *scene_binary(struct scene *sc)
{
	struct hr_error err = { 0 };

	if (!sc->bin && !(sc->bin = binary_fixture_finish(sc->g.fx, &err)))
		fail_msg("binary_fixture_finish: %s", err.msg);
	return sc->bin;
}

/* Scans the scene, checks that the tree is expected (as hm_tree_text() writes it) and the invariant. */
static void scene_expect(struct scene *sc, bool fold, const char *expected)
{
	char *text;

	hm_run(&sc->run, &sc->m, scene_binary(sc), fold, NULL);
	text = hm_tree_text(sc->run.tree);
	if (strcmp(text, expected))
		fail_msg("tree:\n%s\nwant:\n%s", text, expected);
	free(text);
	hm_check_reach(&sc->m, &sc->run);
}

static void scene_end(struct scene *sc)
{
	hm_run_release(&sc->run);
	hr_binary_free(sc->bin);
}

/* ---- a linked list ------------------------------------------------------------------- */

/*
 * main.Node{next *main.Node; buf []uint8}, 32 bytes; main.head *main.Node at DATA, and
 * with alias main.alias *main.Node at DATA + 8 pointing to the third node:
 *
 *   N1 (H+0x00) -> N2 (H+0x20) -> N3 (H+0x40) -> N4 (H+0x60)
 *   buf: B1 (16 B)  nil            B3 (48 B)      B4 (64 B)
 *
 * and G (H+0x80), garbage pointing to N1. 7 objects of 256 bytes are reachable.
 */
static void list_heap(struct scene *sc, bool alias)
{
	struct go_types *g = &sc->g;
	struct heapmodel *m = &sc->m;
	uint32_t node, node_ptr;
	static const uint64_t bufs[4][2] = { { H + 0x2000, 16 }, { 0, 0 }, { H + 0x2010, 48 },
					     { H + 0x2040, 64 } };

	scene_begin(sc, "go1.26.8");
	node = gt_struct(g, "main.Node", 32, 0);
	node_ptr = gt_ptr(g, "*main.Node", node, 0);
	binary_fixture_member(g->fx, node, "next", 0, node_ptr);
	binary_fixture_member(g->fx, node, "buf", 8, g->bytes);
	binary_fixture_global(g->fx, "main.head", DATA, node_ptr);
	if (alias)
		binary_fixture_global(g->fx, "main.alias", DATA + 8, node_ptr);

	hm_segment(m, HM_DATA, DATA, 16);
	hm_ptr(m, DATA, H);
	if (alias)
		hm_ptr(m, DATA + 8, H + 0x40);
	for (uint64_t i = 0; i < 4; i++) {
		uint64_t n = H + 0x20 * i;

		hm_object(m, n, 32);
		hm_ptr(m, n, i < 3 ? n + 0x20 : 0);
		hm_ptr(m, n + 8, bufs[i][0]);
		hm_word(m, n + 16, bufs[i][1] / 2); /* len */
		hm_word(m, n + 24, bufs[i][1]);     /* cap */
		if (bufs[i][0])
			hm_object(m, bufs[i][0], bufs[i][1]);
	}
	hm_object(m, H + 0x80, 32);
	hm_ptr(m, H + 0x80, H);
}

/*
 * Folded: main.head holds N1; its buf B1; every later node is the one
 * `next. (*main.Node)` node (N2, N3, N4: 96 B), their buffers below it (B3, B4: 112 B).
 */
static void test_list_folded(void **state)
{
	struct scene sc;
	const struct hr_scan_summary *s;

	(void)state;
	list_heap(&sc, false);
	scene_expect(&sc, true,
		     "main.head -> buf. ([]uint8): 1 16\n"
		     "main.head -> next. (*main.Node) -> buf. ([]uint8): 2 112\n"
		     "main.head -> next. (*main.Node): 3 96\n"
		     "main.head: 1 32\n");
	s = sc.run.sum;
	assert_int_equal(s->roots[HR_ROOT_GLOBAL], 1);
	assert_int_equal(s->typed_objects, 7);
	assert_int_equal(s->typed_bytes, 256);
	assert_int_equal(s->fallback_objects, 0);
	assert_int_equal(s->unreachable_objects, 1); /* G */
	assert_int_equal(s->unreachable_bytes, 32);
	scene_end(&sc);
}

/* --full-chains: a node per link, N2's nil buf making none. */
static void test_list_full_chains(void **state)
{
	struct scene sc;

	(void)state;
	list_heap(&sc, false);
	scene_expect(&sc, false,
		     "main.head -> buf. ([]uint8): 1 16\n"
		     "main.head -> next. (*main.Node) -> next. (*main.Node) -> buf. ([]uint8): 1 48\n"
		     "main.head -> next. (*main.Node) -> next. (*main.Node) -> next. (*main.Node) "
		     "-> buf. ([]uint8): 1 64\n"
		     "main.head -> next. (*main.Node) -> next. (*main.Node) -> next. (*main.Node): 1 32\n"
		     "main.head -> next. (*main.Node) -> next. (*main.Node): 1 32\n"
		     "main.head -> next. (*main.Node): 1 32\n"
		     "main.head: 1 32\n");
	scene_end(&sc);
}

/*
 * main.alias points to N3, which main.head reaches too, through N2. The walk is breadth
 * first over all roots: N3 goes to main.alias (a chain of one) and is charged once; so
 * do N4 and the buffers it leads to. The same 7 objects, 256 bytes.
 */
static void test_list_node_reached_twice(void **state)
{
	struct scene sc;

	(void)state;
	list_heap(&sc, true);
	scene_expect(&sc, true,
		     "main.alias -> buf. ([]uint8): 1 48\n"
		     "main.alias -> next. (*main.Node) -> buf. ([]uint8): 1 64\n"
		     "main.alias -> next. (*main.Node): 1 32\n"
		     "main.alias: 1 32\n"
		     "main.head -> buf. ([]uint8): 1 16\n"
		     "main.head -> next. (*main.Node): 1 32\n"
		     "main.head: 1 32\n");
	assert_int_equal(sc.run.sum->roots[HR_ROOT_GLOBAL], 2);
	scene_end(&sc);
}

/* The tree is the same with pass 1's work shared out to two threads object by object. */
static void test_list_same_with_threads(void **state)
{
	struct scene sc;
	struct hr_scan_options alone = { .threads = 1 }, shared = { .threads = 2, .chunk_objects = 1 };
	struct hm_run two;
	char *a, *b;

	(void)state;
	list_heap(&sc, true);
	hm_run(&sc.run, &sc.m, scene_binary(&sc), true, &alone);
	hm_run(&two, &sc.m, scene_binary(&sc), true, &shared);
	a = hm_tree_text(sc.run.tree);
	b = hm_tree_text(two.tree);
	assert_string_equal(a, b);
	free(a);
	free(b);
	hm_run_release(&two);
	scene_end(&sc);
}

/* ---- structs, arrays, slices, strings ------------------------------------------------- */

/*
 * main.Item{name string; n int} (24 B); main.box main.Box at DATA:
 *   label string          -> S0 "hello" (8 B)
 *   first [2]*main.Item   -> [0] I1 (name S1, 16 B), [1] nil
 *   items []*main.Item    -> A, 12 pointers (96 B): [0] I2 (name S2, 16 B), [5] I3 (no
 *                            name), [10] I4 (name S4, 8 B), [11] I5; the others nil
 *   inl main.Item         -> name S3 (32 B)
 * 11 objects, 296 bytes.
 */
static void test_fields_arrays_slices_strings(void **state)
{
	struct scene sc;
	uint32_t item, item_ptr, box;
	uint64_t item_at[5] = { H + 0x100, H + 0x118, H + 0x130, H + 0x148, H + 0x160 };

	(void)state;
	scene_begin(&sc, "go1.26.8");
	item = gt_struct(&sc.g, "main.Item", 24, 0);
	binary_fixture_member(sc.g.fx, item, "name", 0, sc.g.string);
	binary_fixture_member(sc.g.fx, item, "n", 16, sc.g.i64);
	item_ptr = gt_ptr(&sc.g, "*main.Item", item, 0);
	box = gt_struct(&sc.g, "main.Box", 80, 0);
	binary_fixture_member(sc.g.fx, box, "label", 0, sc.g.string);
	binary_fixture_member(sc.g.fx, box, "first", 16,
			      gt_array(&sc.g, "[2]*main.Item", item_ptr, 2, 8));
	binary_fixture_member(sc.g.fx, box, "items", 32,
			      gt_slice(&sc.g, "[]*main.Item", item_ptr,
				       gt_ptr(&sc.g, "**main.Item", item_ptr, 0)));
	binary_fixture_member(sc.g.fx, box, "inl", 56, item);
	binary_fixture_global(sc.g.fx, "main.box", DATA, box);

	hm_segment(&sc.m, HM_DATA, DATA, 80);
	hm_ptr(&sc.m, DATA, H);               /* label: S0 */
	hm_word(&sc.m, DATA + 8, 5);
	hm_ptr(&sc.m, DATA + 16, item_at[0]); /* first[0]: I1 */
	hm_ptr(&sc.m, DATA + 24, 0);          /* first[1] */
	hm_ptr(&sc.m, DATA + 32, H + 0x400);  /* items: A */
	hm_word(&sc.m, DATA + 40, 12);
	hm_word(&sc.m, DATA + 48, 12);
	hm_ptr(&sc.m, DATA + 56, H + 0x1040); /* inl.name: S3 */
	hm_word(&sc.m, DATA + 64, 20);
	hm_object(&sc.m, H, 8);               /* S0 */
	hm_object(&sc.m, H + 0x1000, 8);      /* S4 */
	hm_object(&sc.m, H + 0x1010, 16);     /* S1 */
	hm_object(&sc.m, H + 0x1020, 16);     /* S2 */
	hm_object(&sc.m, H + 0x1040, 32);     /* S3 */
	for (int i = 0; i < 5; i++) {
		hm_object(&sc.m, item_at[i], 24);
		hm_ptr(&sc.m, item_at[i], 0);
	}
	hm_ptr(&sc.m, item_at[0], H + 0x1010);
	hm_word(&sc.m, item_at[0] + 8, 10);
	hm_ptr(&sc.m, item_at[1], H + 0x1020);
	hm_word(&sc.m, item_at[1] + 8, 16);
	hm_ptr(&sc.m, item_at[3], H + 0x1000);
	hm_word(&sc.m, item_at[3] + 8, 3);
	hm_object(&sc.m, H + 0x400, 96);      /* A */
	for (int k = 0; k < 12; k++)
		hm_ptr(&sc.m, H + 0x400 + 8 * (uint64_t)k, 0);
	hm_ptr(&sc.m, H + 0x400, item_at[1]);
	hm_ptr(&sc.m, H + 0x400 + 5 * 8, item_at[2]);
	hm_ptr(&sc.m, H + 0x400 + 10 * 8, item_at[3]);
	hm_ptr(&sc.m, H + 0x400 + 11 * 8, item_at[4]);

	scene_expect(&sc, true,
		     "main.box -> first. ([2]*main.Item) -> [0]. (*main.Item) -> name. (string): 1 16\n"
		     "main.box -> first. ([2]*main.Item) -> [0]. (*main.Item): 1 24\n"
		     "main.box -> first. ([2]*main.Item): 0 0\n"
		     "main.box -> inl. (main.Item) -> name. (string): 1 32\n"
		     "main.box -> inl. (main.Item): 0 0\n"
		     "main.box -> items. ([]*main.Item) -> [0]. (*main.Item) -> name. (string): 1 16\n"
		     "main.box -> items. ([]*main.Item) -> [0]. (*main.Item): 1 24\n"
		     "main.box -> items. ([]*main.Item) -> [10+]. (*main.Item) -> name. (string): 1 8\n"
		     "main.box -> items. ([]*main.Item) -> [10+]. (*main.Item): 2 48\n"
		     "main.box -> items. ([]*main.Item) -> [5]. (*main.Item): 1 24\n"
		     "main.box -> items. ([]*main.Item): 1 96\n"
		     "main.box -> label. (string): 1 8\n"
		     "main.box: 0 0\n");
	assert_int_equal(sc.run.sum->typed_bytes, 296);
	scene_end(&sc);
}

/* ---- interfaces ----------------------------------------------------------------------- */

/*
 * main.Big{buf []uint8} (24 B; runtime type at RUNTIME_TYPES + 0x200), *main.Big
 * (+ 0x100); an interface main.Sizer; the itab of (*main.Big, main.Sizer) at 0x4c0000.
 *   main.any interface {}    = {*main.Big, B1}: stored directly; B1.buf -> X1 (64 B)
 *   main.holder main.Holder  = {Payload interface {} = {main.Big, B2}: behind the data
 *                               word; B2.buf -> X2 (16 B);
 *                               Shape main.Sizer = {itab, B3}; B3.buf -> X3 (32 B)}
 *   main.unknown interface {} = {a type word no type has, X4 (48 B)}: left to pass 2
 * Interfaces are named by their dynamic type; a root keeps its own name.
 */
static void test_interfaces(void **state)
{
	struct scene sc;
	uint32_t big, holder;
	const uint64_t big_rt = RUNTIME_TYPES + 0x200, big_ptr_rt = RUNTIME_TYPES + 0x100;

	(void)state;
	scene_begin(&sc, "go1.26.8");
	big = gt_struct(&sc.g, "main.Big", 24, 0x200);
	binary_fixture_member(sc.g.fx, big, "buf", 0, sc.g.bytes);
	gt_ptr(&sc.g, "*main.Big", big, 0x100);
	holder = gt_struct(&sc.g, "main.Holder", 32, 0);
	binary_fixture_member(sc.g.fx, holder, "Payload", 0, sc.g.eface);
	binary_fixture_member(sc.g.fx, holder, "Shape", 16, gt_iface(&sc.g, "main.Sizer"));
	binary_fixture_global(sc.g.fx, "main.any", DATA, sc.g.eface);
	binary_fixture_global(sc.g.fx, "main.holder", DATA + 16, holder);
	binary_fixture_global(sc.g.fx, "main.unknown", DATA + 48, sc.g.eface);
	binary_fixture_symbol(sc.g.fx, "runtime.types", RUNTIME_TYPES, 0x1000);

	hm_itab(&sc.m, 0x4c0000, big_ptr_rt);
	hm_segment(&sc.m, HM_DATA, DATA, 64);
	hm_ptr(&sc.m, DATA, big_ptr_rt);
	hm_ptr(&sc.m, DATA + 8, H);              /* B1 */
	hm_ptr(&sc.m, DATA + 16, big_rt);
	hm_ptr(&sc.m, DATA + 24, H + 0x18);      /* B2 */
	hm_ptr(&sc.m, DATA + 32, 0x4c0000);
	hm_ptr(&sc.m, DATA + 40, H + 0x30);      /* B3 */
	hm_ptr(&sc.m, DATA + 48, RUNTIME_TYPES + 0x900);
	hm_ptr(&sc.m, DATA + 56, H + 0x1000);    /* X4 */
	for (uint64_t i = 0; i < 3; i++) {   /* B1, B2, B3 and their buffers */
		static const uint64_t sizes[3] = { 64, 16, 32 };
		uint64_t b = H + 0x18 * i, x = H + 0x800 + 0x40 * i;

		hm_object(&sc.m, b, 24);
		hm_ptr(&sc.m, b, x);
		hm_word(&sc.m, b + 8, sizes[i]);
		hm_word(&sc.m, b + 16, sizes[i]);
		hm_object(&sc.m, x, sizes[i]);
	}
	hm_object(&sc.m, H + 0x1000, 48);

	scene_expect(&sc, true,
		     "main.any -> buf. ([]uint8): 1 64\n"
		     "main.any: 1 24\n"
		     "main.holder -> Payload. (main.Big) -> buf. ([]uint8): 1 16\n"
		     "main.holder -> Payload. (main.Big): 1 24\n"
		     "main.holder -> Shape. (*main.Big) -> buf. ([]uint8): 1 32\n"
		     "main.holder -> Shape. (*main.Big): 1 24\n"
		     "main.holder: 0 0\n"
		     "main.unknown -> $sub_objects$: 1 48\n"
		     "main.unknown: 0 0\n");
	assert_int_equal(sc.run.sum->fallback_objects, 1);
	scene_end(&sc);
}

/* ---- a bucket map (Go <= 1.23) ------------------------------------------------------- */

/* The maps' value type: main.Entry{id int; buf []uint8} (32 B); its pointer type. */
static uint32_t entry_ptr_type(struct scene *sc)
{
	uint32_t entry = gt_struct(&sc->g, "main.Entry", 32, 0);

	binary_fixture_member(sc->g.fx, entry, "id", 0, sc->g.i64);
	binary_fixture_member(sc->g.fx, entry, "buf", 8, sc->g.bytes);
	return gt_ptr(&sc->g, "*main.Entry", entry, 0);
}

/* Entry e at `at` (id e), its buf the len bytes at H + 0x3000 + 0x40 * e (nil if none). */
static void entry_object(struct scene *sc, uint64_t at, uint64_t e, uint64_t len)
{
	uint64_t bytes = H + 0x3000 + 0x40 * e;

	hm_object(&sc->m, at, 32);
	hm_word(&sc->m, at, e);
	hm_ptr(&sc->m, at + 8, len ? bytes : 0);
	hm_word(&sc->m, at + 16, len);
	hm_word(&sc->m, at + 24, len);
	if (len)
		hm_object(&sc->m, bytes, len);
}

/*
 * main.cache map[string]*main.Entry at DATA, main.Entry{id int; buf []uint8} (32 B), in
 * a go1.23 dump: the header Hm (48 B, B = 0) -> its one bucket K0 (208 B) holding
 * "k0" -> E0, "k1" -> E1, and the overflow bucket K1 (208 B) holding "k2" -> E2. The
 * keys' bytes are 8 B each; E0.buf -> D0 (16 B), E1.buf nil, E2.buf -> D2 (64 B).
 * The map's storage (Hm, K0, K1) is the map's own: 464 B; 11 objects, 664 B in all.
 */
static void test_bucket_map(void **state)
{
	struct scene sc;
	uint32_t entry_ptr;
	const uint64_t hdr = H, bucket[2] = { H + 0x100, H + 0x200 }, buf[3] = { 16, 0, 64 };

	(void)state;
	scene_begin(&sc, "go1.23.12");
	entry_ptr = entry_ptr_type(&sc);
	binary_fixture_global(sc.g.fx, "main.cache", DATA,
			      gt_bucket_map(&sc.g, "map[string]*main.Entry", "string", sc.g.string, 16,
					    "*main.Entry", entry_ptr, 8));

	hm_segment(&sc.m, HM_DATA, DATA, 8);
	hm_ptr(&sc.m, DATA, hdr);
	hm_object(&sc.m, hdr, 48);
	hm_word(&sc.m, hdr, 3);                 /* count */
	hm_ptr(&sc.m, hdr + 16, bucket[0]);     /* buckets */
	hm_ptr(&sc.m, hdr + 24, 0);             /* oldbuckets */
	hm_ptr(&sc.m, hdr + 40, 0);             /* extra */
	for (int b = 0; b < 2; b++) {        /* every key's str, every value and overflow */
		hm_object(&sc.m, bucket[b], 208);
		for (uint64_t k = 0; k < 8; k++) {
			hm_ptr(&sc.m, bucket[b] + 8 + 16 * k, 0);
			hm_ptr(&sc.m, bucket[b] + 136 + 8 * k, 0);
		}
		hm_ptr(&sc.m, bucket[b] + 200, b == 0 ? bucket[1] : 0);
		hm_word(&sc.m, bucket[b], b == 0 ? 0xa1a0 : 0xa2); /* tophash */
	}
	for (uint64_t e = 0; e < 3; e++) {   /* key e and entry e, in bucket e / 2 slot e % 2 */
		uint64_t slot = bucket[e / 2] + 8 * (e % 2), key = H + 0x1000 + 8 * e;
		uint64_t ent = H + 0x2000 + 0x20 * e;

		hm_ptr(&sc.m, bucket[e / 2] + 8 + 16 * (e % 2), key);
		hm_word(&sc.m, bucket[e / 2] + 16 + 16 * (e % 2), 2);
		hm_ptr(&sc.m, slot + 136, ent);
		hm_object(&sc.m, key, 8);
		entry_object(&sc, ent, e, buf[e]); /* D0, D2 */
	}

	scene_expect(&sc, true,
		     "main.cache -> $mapkey. (string): 3 24\n"
		     "main.cache -> $mapval. (*main.Entry) -> buf. ([]uint8): 2 80\n"
		     "main.cache -> $mapval. (*main.Entry): 3 96\n"
		     "main.cache: 3 464\n");
	assert_int_equal(sc.run.sum->go_minor, 23);
	scene_end(&sc);
}

/*
 * Go >= 1.24 (swiss) maps, map[string]*main.Entry (Entry as above), slots {key string;
 * elem *main.Entry} of 24 B, groups of 200 B in objects of 208 (one) and 416 (two):
 *   main.small: header Hs (48 B), dirLen 0: dirPtr is its one group G0 (a struct
 *       walked member by member), whose slot 0 holds "k0" -> E0, slot 2 "k3" -> nil,
 *       the rest empty;
 *   main.big: header Hb (48 B), dirLen 2: dirPtr -> directory D (16 B) -> tables T0, T1
 *       (32 B each); T0's one group GA holds "k2" -> E2 in slot 5, T1's two groups GB
 *       (a run of groups, walked in place) hold "k4" -> nil in group 0's slot 3 and ""
 *       (a nil key pointer) -> E1 in group 1's slot 7, the rest empty.
 * E0.buf -> D0 (16 B), E1.buf nil, E2.buf -> D2 (64 B); keys' bytes 8 B each.
 * An empty slot (both followed words nil) is ticked without its walk; a slot with one
 * word nil (either one) is walked, the other word followed. The storage is the map's
 * own: main.small Hs + G0 (2, 256 B), main.big Hb, D, T0, T1, GA, GB (6, 752 B).
 */
static void test_swiss_map(void **state)
{
	struct scene sc;
	uint32_t map;
	const uint64_t hs = H, hb = H + 0x40, g0 = H + 0x100, dir = H + 0x200;
	const uint64_t table[2] = { H + 0x220, H + 0x240 }, groups[2] = { H + 0x300, H + 0x400 };
	const uint64_t group_bytes[2] = { 208, 416 }, ent[3] = { H + 0x2000, H + 0x2020, H + 0x2040 };
	const uint64_t buf[3] = { 16, 0, 64 };
	/* each filled slot: its group's first byte, slot, key bytes (0: ""), entry (0: nil) */
	const struct {
		uint64_t group, slot, key, entry;
	} filled[] = {
		{ g0, 0, H + 0x1000, ent[0] }, { g0, 2, H + 0x1018, 0 },
		{ groups[0], 5, H + 0x1010, ent[2] }, { groups[1], 3, H + 0x1020, 0 },
		{ groups[1] + 200, 7, 0, ent[1] },
	};
	const uint64_t group_at[4] = { g0, groups[0], groups[1], groups[1] + 200 };
	uint64_t ctrl[4]; /* a byte a slot: 0x80 empty, 7 bits of the key's hash if full */

	(void)state;
	scene_begin(&sc, "go1.26.8");
	map = gt_swiss_map(&sc.g, "map[string]*main.Entry", "string", sc.g.string, 16,
			   "*main.Entry", entry_ptr_type(&sc), 8);
	binary_fixture_global(sc.g.fx, "main.small", DATA, map);
	binary_fixture_global(sc.g.fx, "main.big", DATA + 8, map);

	hm_segment(&sc.m, HM_DATA, DATA, 16);
	hm_ptr(&sc.m, DATA, hs);
	hm_ptr(&sc.m, DATA + 8, hb);
	for (int k = 0; k < 2; k++) { /* headers: used (2 and 3), dirPtr, dirLen */
		uint64_t h = k ? hb : hs;

		hm_object(&sc.m, h, 48);
		hm_word(&sc.m, h, k ? 3 : 2);
		hm_ptr(&sc.m, h + 16, k ? dir : g0);
		hm_word(&sc.m, h + 24, k ? 2 : 0);
	}
	hm_object(&sc.m, dir, 16);
	for (int t = 0; t < 2; t++) { /* tables: groups.data, groups.lengthMask */
		hm_ptr(&sc.m, dir + 8 * t, table[t]);
		hm_object(&sc.m, table[t], 32);
		hm_ptr(&sc.m, table[t] + 16, groups[t]);
		hm_word(&sc.m, table[t] + 24, (uint64_t)t);
		hm_object(&sc.m, groups[t], group_bytes[t]);
	}
	hm_object(&sc.m, g0, 208);
	for (int k = 0; k < 4; k++) { /* every group: each slot's two words */
		uint64_t g = group_at[k];

		for (uint64_t j = 0; j < 8; j++) {
			hm_ptr(&sc.m, g + 8 + 24 * j, 0);
			hm_ptr(&sc.m, g + 8 + 24 * j + 16, 0);
		}
	}
	for (int c = 0; c < 4; c++)
		ctrl[c] = UINT64_C(0x8080808080808080);
	for (size_t f = 0; f < sizeof(filled) / sizeof(filled[0]); f++) {
		uint64_t slot = filled[f].group + 8 + 24 * filled[f].slot;

		/* its control byte: 7 bits of its hash, here 0 (the walk reads none) */
		for (int k = 0; k < 4; k++)
			if (group_at[k] == filled[f].group)
				ctrl[k] &= ~(UINT64_C(0xff) << (8 * filled[f].slot));
		hm_ptr(&sc.m, slot, filled[f].key);
		hm_word(&sc.m, slot + 8, filled[f].key ? 2 : 0);
		hm_ptr(&sc.m, slot + 16, filled[f].entry);
		if (filled[f].key)
			hm_object(&sc.m, filled[f].key, 8);
	}
	for (int c = 0; c < 4; c++)
		hm_word(&sc.m, group_at[c], ctrl[c]);
	for (int e = 0; e < 3; e++)
		entry_object(&sc, ent[e], (uint64_t)e, buf[e]); /* D0, D2 */

	scene_expect(&sc, true,
		     "main.big -> $mapkey. (string): 2 16\n"
		     "main.big -> $mapval. (*main.Entry) -> buf. ([]uint8): 1 64\n"
		     "main.big -> $mapval. (*main.Entry): 2 64\n"
		     "main.big: 6 752\n"
		     "main.small -> $mapkey. (string): 2 16\n"
		     "main.small -> $mapval. (*main.Entry) -> buf. ([]uint8): 1 16\n"
		     "main.small -> $mapval. (*main.Entry): 1 32\n"
		     "main.small: 2 256\n");
	scene_end(&sc);
}

/* ---- pass 2 ---------------------------------------------------------------------------- */

/*
 * Words no type explains, followed by the bitmaps alone (docs/analysis.md, pass 2):
 *   main.h *main.Wrap -> W{raw unsafe.Pointer -> L1 (32 B) -> L2 (16 B); next *main.Leaf
 *       -> L3}: raw is left, so L1 and all it reaches go to main.h's $sub_objects$
 *   main.u unsafe.Pointer -> U1 (64 B): a word inside a global its type does not read
 *   main.pb *int -> &P.B, P = main.Pair{A *main.Leaf -> L4; B int}: the view from
 *       inside P leaves A
 *   DATA + 0x10, in the symbol runtime.somevar -> T1 (24 B) -> T2 (16 B)
 *   DATA + 0x30, in no symbol -> V1; BSS + 8 -> V2 (8 B each)
 * Leaves are main.Leaf{next *main.Leaf}, 16 B.
 */
static void test_pass2_untyped_words(void **state)
{
	struct scene sc;
	const struct hr_scan_summary *s;
	uint32_t leaf, leaf_ptr, wrap, pair;

	(void)state;
	scene_begin(&sc, "go1.26.8");
	leaf = gt_struct(&sc.g, "main.Leaf", 16, 0);
	leaf_ptr = gt_ptr(&sc.g, "*main.Leaf", leaf, 0);
	binary_fixture_member(sc.g.fx, leaf, "next", 0, leaf_ptr);
	wrap = gt_struct(&sc.g, "main.Wrap", 16, 0);
	binary_fixture_member(sc.g.fx, wrap, "raw", 0, sc.g.unsafe_ptr);
	binary_fixture_member(sc.g.fx, wrap, "next", 8, leaf_ptr);
	pair = gt_struct(&sc.g, "main.Pair", 16, 0);
	binary_fixture_member(sc.g.fx, pair, "A", 0, leaf_ptr);
	binary_fixture_member(sc.g.fx, pair, "B", 8, sc.g.i64);
	gt_ptr(&sc.g, "*main.Pair", pair, 0);
	binary_fixture_global(sc.g.fx, "main.h", DATA, gt_ptr(&sc.g, "*main.Wrap", wrap, 0));
	binary_fixture_global(sc.g.fx, "main.u", DATA + 8, sc.g.unsafe_ptr);
	binary_fixture_global(sc.g.fx, "main.pb", DATA + 0x20, gt_ptr(&sc.g, "*int", sc.g.i64, 0));
	binary_fixture_symbol(sc.g.fx, "runtime.somevar", DATA + 0x10, 8);

	hm_segment(&sc.m, HM_DATA, DATA, 0x38);
	hm_segment(&sc.m, HM_BSS, BSS, 16);
	hm_ptr(&sc.m, DATA, H);               /* main.h: W */
	hm_ptr(&sc.m, DATA + 8, H + 0x400);   /* main.u: U1 */
	hm_ptr(&sc.m, DATA + 0x10, H + 0x200);/* runtime.somevar: T1 */
	hm_ptr(&sc.m, DATA + 0x20, H + 0x108);/* main.pb: &P.B */
	hm_ptr(&sc.m, DATA + 0x30, H + 0x300);/* V1 */
	hm_ptr(&sc.m, BSS + 8, H + 0x308);    /* V2 */
	hm_object(&sc.m, H, 16);              /* W */
	hm_ptr(&sc.m, H, H + 0x40);
	hm_ptr(&sc.m, H + 8, H + 0x10);
	hm_object(&sc.m, H + 0x10, 16);       /* L3 */
	hm_object(&sc.m, H + 0x20, 16);       /* L4 */
	hm_object(&sc.m, H + 0x40, 32);       /* L1 */
	hm_ptr(&sc.m, H + 0x48, H + 0x60);
	hm_object(&sc.m, H + 0x60, 16);       /* L2 */
	hm_object(&sc.m, H + 0x100, 16);      /* P */
	hm_ptr(&sc.m, H + 0x100, H + 0x20);
	hm_word(&sc.m, H + 0x108, 7);
	hm_object(&sc.m, H + 0x200, 24);      /* T1 */
	hm_ptr(&sc.m, H + 0x210, H + 0x220);
	hm_object(&sc.m, H + 0x220, 16);      /* T2 */
	hm_object(&sc.m, H + 0x300, 8);       /* V1 */
	hm_object(&sc.m, H + 0x308, 8);       /* V2 */
	hm_object(&sc.m, H + 0x400, 64);      /* U1 */

	scene_expect(&sc, true,
		     "$bss+0x8: 1 8\n"
		     "$data+0x30: 1 8\n"
		     "main.h -> $sub_objects$: 2 48\n"
		     "main.h -> next. (*main.Leaf): 1 16\n"
		     "main.h: 1 16\n"
		     "main.pb -> $sub_objects$: 1 16\n"
		     "main.pb: 1 16\n"
		     "main.u -> $sub_objects$: 1 64\n"
		     "main.u: 0 0\n"
		     "runtime.somevar: 2 40\n");
	s = sc.run.sum;
	assert_int_equal(s->typed_objects, 3);    /* W, L3, P */
	assert_int_equal(s->fallback_objects, 8);
	assert_int_equal(s->roots[HR_ROOT_GLOBAL], 3);
	assert_int_equal(s->roots[HR_ROOT_DATA_WORDS], 4);
	scene_end(&sc);
}

/* ---- malloc headers (Go >= 1.22) ----------------------------------------------------- */

/*
 * main.raw unsafe.Pointer at DATA points one word into O, a 640-byte object (more than
 * 512 bytes, with pointers) whose first word, its malloc header, is main.Blob's type
 * word; main.Blob{data *main.Leaf} (632 B) -> L (16 B). The pointer is walked as the
 * header says: O is main.raw's, L is `data. (*main.Leaf)`.
 *
 * The unsafe.Pointer here has the kind HR_KIND_UNSAFE_POINTER, which is what this path
 * of the walk looks for; a binary read by hr_binary_open() types unsafe.Pointer as Go's
 * DWARF leaves it (gotypes.h: no DW_AT_go_kind, so HR_KIND_PTR without a target), and
 * the same heap then goes to pass 2: main.raw -> $sub_objects$ (2 objects, 656 B).
 */
static void test_malloc_header(void **state)
{
	struct scene sc;
	uint32_t leaf, leaf_ptr, blob, unsafe_ptr;

	(void)state;
	scene_begin(&sc, "go1.26.8");
	leaf = gt_struct(&sc.g, "main.Leaf", 16, 0);
	leaf_ptr = gt_ptr(&sc.g, "*main.Leaf", leaf, 0);
	binary_fixture_member(sc.g.fx, leaf, "next", 0, leaf_ptr);
	blob = gt_struct(&sc.g, "main.Blob", 632, 0x300);
	binary_fixture_member(sc.g.fx, blob, "data", 0, leaf_ptr);
	unsafe_ptr = binary_fixture_type(sc.g.fx, &(struct hr_type){ .name = "unsafe.Pointer",
		.kind = HR_KIND_UNSAFE_POINTER, .shape = HR_SHAPE_POINTER });
	binary_fixture_global(sc.g.fx, "main.raw", DATA, unsafe_ptr);
	binary_fixture_symbol(sc.g.fx, "runtime.types", RUNTIME_TYPES, 0x1000);

	hm_segment(&sc.m, HM_DATA, DATA, 8);
	hm_ptr(&sc.m, DATA, H + 8);
	hm_object(&sc.m, H, 640);
	hm_word(&sc.m, H, RUNTIME_TYPES + 0x300); /* the header */
	hm_ptr(&sc.m, H + 8, H + 0x400);
	hm_object(&sc.m, H + 0x400, 16);

	scene_expect(&sc, true,
		     "main.raw -> data. (*main.Leaf): 1 16\n"
		     "main.raw: 1 640\n");
	assert_int_equal(sc.run.sum->header_typed, 1);
	scene_end(&sc);
}

/* ---- goroutine frames -------------------------------------------------------------------- */

/*
 * One goroutine: main.worker's frame at SP (32 B; CFA = SP + 32) called by main.main's
 * at SP + 32 (16 B). main.worker has a local buf []uint8 at CFA-24 -> D1 (32 B) and a
 * parameter p *main.Leaf at CFA+0 (in its caller's frame) -> F1 -> F2 (16 B each). The
 * word at SP is a pointer no variable covers -> Z1 (48 B), so is main.main's word at
 * SP + 40 -> Z2 (16 B): roots named after their frame's function.
 */
static void test_frames(void **state)
{
	struct scene sc;
	const struct hr_scan_summary *s;
	const uint64_t sp = UINT64_C(0xc000080000);
	uint32_t leaf, leaf_ptr;

	(void)state;
	scene_begin(&sc, "go1.26.8");
	leaf = gt_struct(&sc.g, "main.Leaf", 16, 0);
	leaf_ptr = gt_ptr(&sc.g, "*main.Leaf", leaf, 0);
	binary_fixture_member(sc.g.fx, leaf, "next", 0, leaf_ptr);
	binary_fixture_func(sc.g.fx, "main.worker", 0x401000, 0x401200);
	binary_fixture_var(sc.g.fx, "p", leaf_ptr, true, 0);
	binary_fixture_var(sc.g.fx, "buf", sc.g.bytes, false, -24);
	binary_fixture_func(sc.g.fx, "main.main", 0x401200, 0x401300);

	hm_frame(&sc.m, sp, 32, 0x401000, 0x401050, "main.worker");
	hm_frame(&sc.m, sp + 32, 16, 0x401200, 0x401280, "main.main");
	hm_ptr(&sc.m, sp, H + 0x100);          /* Z1 */
	hm_ptr(&sc.m, sp + 8, H);              /* buf: D1 */
	hm_word(&sc.m, sp + 16, 32);
	hm_word(&sc.m, sp + 24, 32);
	hm_ptr(&sc.m, sp + 32, H + 0x40);      /* p: F1 */
	hm_ptr(&sc.m, sp + 40, H + 0x140);     /* Z2 */
	hm_object(&sc.m, H, 32);               /* D1 */
	hm_object(&sc.m, H + 0x40, 16);        /* F1 */
	hm_ptr(&sc.m, H + 0x40, H + 0x50);
	hm_object(&sc.m, H + 0x50, 16);        /* F2 */
	hm_ptr(&sc.m, H + 0x50, 0);
	hm_object(&sc.m, H + 0x100, 48);       /* Z1 */
	hm_object(&sc.m, H + 0x140, 16);       /* Z2 */

	scene_expect(&sc, true,
		     "main.main: 1 16\n"
		     "main.worker.buf: 1 32\n"
		     "main.worker.p -> next. (*main.Leaf): 1 16\n"
		     "main.worker.p: 1 16\n"
		     "main.worker: 1 48\n");
	s = sc.run.sum;
	assert_int_equal(s->roots[HR_ROOT_FRAME_VAR], 2);
	assert_int_equal(s->roots[HR_ROOT_FRAME_WORDS], 2);
	assert_int_equal(s->typed_objects, 3);    /* D1, F1, F2 */
	assert_int_equal(s->fallback_objects, 2); /* Z1, Z2 */
	scene_end(&sc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_list_folded),
		cmocka_unit_test(test_list_full_chains),
		cmocka_unit_test(test_list_node_reached_twice),
		cmocka_unit_test(test_list_same_with_threads),
		cmocka_unit_test(test_fields_arrays_slices_strings),
		cmocka_unit_test(test_interfaces),
		cmocka_unit_test(test_bucket_map),
		cmocka_unit_test(test_swiss_map),
		cmocka_unit_test(test_pass2_untyped_words),
		cmocka_unit_test(test_malloc_header),
		cmocka_unit_test(test_frames),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
