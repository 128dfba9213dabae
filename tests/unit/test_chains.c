/* SPDX-License-Identifier: Apache-2.0 */
/* test_chains.c - the chain tree: children made once, names interned, depth cut, totals. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "heapref/chains.h"

static uint32_t child(struct hr_chains *t, uint32_t parent, const char *name)
{
	return hr_chains_child(t, parent, name, strlen(name));
}

static void test_children_are_made_once(void **state)
{
	struct hr_chains *t = hr_chains_new(0);
	uint32_t cache = child(t, HR_CHAINS_TOP, "main.cache");
	uint32_t val = child(t, cache, "$mapval. (*main.Entry)");
	uint32_t buf = child(t, val, "buf. ([]uint8)");
	uint32_t other = child(t, HR_CHAINS_TOP, "main.other");

	assert_int_equal(child(t, HR_CHAINS_TOP, "main.cache"), cache);
	assert_int_equal(child(t, cache, "$mapval. (*main.Entry)"), val);
	assert_int_not_equal(child(t, other, "buf. ([]uint8)"), buf); /* same name, other parent */
	assert_int_equal(hr_chains_count(t), 6); /* top + 5 */
	assert_int_equal(hr_chains_name_count(t), 4);
	assert_int_equal(hr_chains_node(t, buf)->depth, 3);
	assert_int_equal(hr_chains_node(t, buf)->parent, val);
	assert_int_equal(hr_chains_node(t, cache)->parent, HR_CHAINS_TOP);
	assert_string_equal(hr_chains_name(t, hr_chains_node(t, buf)->name), "buf. ([]uint8)");
	assert_null(hr_chains_node(t, 99));
	hr_chains_free(t);
}

static void test_depth_limit_cuts_and_charges_the_last_node(void **state)
{
	struct hr_chains *t = hr_chains_new(3);
	uint32_t n = HR_CHAINS_TOP, last = 0;
	uint64_t objects, bytes;

	for (int i = 0; i < 10; i++) {
		n = child(t, n, "next. (*main.Node)");
		hr_chains_charge(t, n, 1, 48);
		if (i == 2)
			last = n;
	}
	assert_int_equal(n, last);
	assert_int_equal(hr_chains_node(t, last)->depth, 3);
	assert_int_equal(hr_chains_count(t), 4);
	assert_int_equal(hr_chains_node(t, last)->objects, 8);
	hr_chains_totals(t, &objects, &bytes);
	assert_int_equal(objects, 10);
	assert_int_equal(bytes, 480);
	hr_chains_free(t);
}

static void test_many_nodes_and_names(void **state)
{
	struct hr_chains *t = hr_chains_new(0);
	char name[32];
	uint32_t ids[5000];

	for (int i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "main.g%d", i);
		ids[i] = child(t, HR_CHAINS_TOP, name);
		child(t, ids[i], "[0]. (int)");
	}
	for (int i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "main.g%d", i);
		assert_int_equal(child(t, HR_CHAINS_TOP, name), ids[i]);
		assert_string_equal(hr_chains_name(t, hr_chains_node(t, ids[i])->name), name);
	}
	assert_int_equal(hr_chains_count(t), 10001);
	assert_int_equal(hr_chains_name_count(t), 5001);
	hr_chains_free(t);
}

/*
 * main.s holds elements [0], [1] (each with a buf) and [10+] of *main.T, and a child
 * "[2]x" that is not an element name. Folded: one [*]. (*main.T) with 1+1+5 objects,
 * 16+16+80 bytes, and one buf with 1+1 objects, 100+200 bytes; "[2]x" stays.
 */
static void test_fold_elements(void **state)
{
	struct hr_chains *t = hr_chains_new(0), *f;
	uint32_t s = child(t, HR_CHAINS_TOP, "main.s"), e0, e1, fs, star, buf;
	uint64_t objects, bytes;

	hr_chains_charge(t, s, 1, 24);
	e0 = child(t, s, "[0]. (*main.T)");
	e1 = child(t, s, "[1]. (*main.T)");
	hr_chains_charge(t, e0, 1, 16);
	hr_chains_charge(t, e1, 1, 16);
	hr_chains_charge(t, child(t, e0, "buf. ([]uint8)"), 1, 100);
	hr_chains_charge(t, child(t, e1, "buf. ([]uint8)"), 1, 200);
	hr_chains_charge(t, child(t, s, "[10+]. (*main.T)"), 5, 80);
	hr_chains_charge(t, child(t, s, "[2]x"), 1, 8);

	f = hr_chains_fold_elements(t);
	assert_non_null(f);
	assert_int_equal(hr_chains_count(f), 5); /* top, main.s, [*], buf, [2]x */
	fs = child(f, HR_CHAINS_TOP, "main.s");
	star = child(f, fs, "[*]. (*main.T)");
	buf = child(f, star, "buf. ([]uint8)");
	assert_int_equal(hr_chains_count(f), 5); /* all three existed already */
	assert_int_equal(hr_chains_node(f, fs)->bytes, 24);
	assert_int_equal(hr_chains_node(f, star)->objects, 7);
	assert_int_equal(hr_chains_node(f, star)->bytes, 112);
	assert_int_equal(hr_chains_node(f, buf)->objects, 2);
	assert_int_equal(hr_chains_node(f, buf)->bytes, 300);
	assert_int_equal(hr_chains_node(f, buf)->depth, 3);
	assert_int_equal(hr_chains_node(f, child(f, fs, "[2]x"))->bytes, 8);
	hr_chains_totals(f, &objects, &bytes);
	assert_int_equal(objects, 11); /* as before folding: 1 + 2 + 2 + 5 + 1 */
	assert_int_equal(bytes, 444);
	hr_chains_free(f);
	hr_chains_free(t);
}

/*
 * With folding: a list's next under next is the first next; a binary tree's Right under
 * Left is the Left; a type met again deeper (*main.T through items. ([]*main.T)) is the
 * first node of that type. Names without a type (roots, $sub_objects$) never fold.
 */
static void test_fold_recursion(void **state)
{
	struct hr_chains *t = hr_chains_new(0);
	uint32_t head, next, root, left, right, items, sub;

	hr_chains_fold_recursion(t);
	head = child(t, HR_CHAINS_TOP, "main.head");
	next = child(t, head, "next. (*main.Node)");
	assert_int_not_equal(next, head); /* a root has no type */
	assert_int_equal(child(t, next, "next. (*main.Node)"), next);
	assert_int_equal(child(t, next, "next. (*main.Node)"), next); /* remembered */
	root = child(t, HR_CHAINS_TOP, "main.root");
	left = child(t, root, "Left. (*main.Tree)");
	right = child(t, root, "Right. (*main.Tree)");
	assert_int_not_equal(left, right); /* siblings: neither is on the other's chain */
	assert_int_equal(child(t, left, "Right. (*main.Tree)"), left);
	assert_int_equal(child(t, right, "Left. (*main.Tree)"), right);
	items = child(t, left, "items. ([]*main.Tree)");
	assert_int_equal(hr_chains_node(t, items)->parent, left);
	assert_int_equal(child(t, items, "[3]. (*main.Tree)"), left);
	assert_int_not_equal(child(t, items, "[3]. (*main.Leaf)"), left);
	sub = child(t, next, "$sub_objects$");
	assert_int_not_equal(sub, next);
	assert_int_not_equal(child(t, sub, "$sub_objects$"), sub); /* no type: no fold */
	assert_int_not_equal(child(t, head, "main.head"), head);
	/* top, head, next, root, left, right, items, [3] Leaf, 2 x $sub_objects$, head>head */
	assert_int_equal(hr_chains_count(t), 11);
	hr_chains_free(t);
}

static uint32_t find(const struct hr_chains *t, uint32_t parent, const char *name)
{
	return hr_chains_find(t, parent, name, strlen(name));
}

/*
 * hr_chains_find() answers as hr_chains_child() would, without changing the tree: a
 * child made, folded or cut by the depth limit; HR_CHAINS_NONE for a new node, and for
 * a name the tree has never seen even where recursion would fold it (child() interns
 * the name: pass 1's workers must leave that to the thread that owns the tree).
 */
static void test_find_changes_nothing(void **state)
{
	struct hr_chains *t = hr_chains_new(3);
	uint32_t head, next, a, b;
	size_t nodes, names;

	(void)state;
	hr_chains_fold_recursion(t);
	head = child(t, HR_CHAINS_TOP, "main.head");
	next = child(t, head, "next. (*main.Node)");
	nodes = hr_chains_count(t);
	names = hr_chains_name_count(t);
	assert_int_equal(find(t, HR_CHAINS_TOP, "main.head"), head);
	assert_int_equal(find(t, head, "next. (*main.Node)"), next);
	assert_int_equal(find(t, next, "next. (*main.Node)"), next); /* folds, not remembered */
	assert_int_equal(find(t, next, "prev. (*main.Node)"), HR_CHAINS_NONE); /* new name */
	assert_int_equal(find(t, head, "main.head"), HR_CHAINS_NONE); /* known name, new node */
	assert_int_equal(find(t, HR_CHAINS_TOP, "main.tail"), HR_CHAINS_NONE);
	assert_int_equal(hr_chains_count(t), nodes);
	assert_int_equal(hr_chains_name_count(t), names);
	/* what find said, child does */
	assert_int_equal(child(t, next, "next. (*main.Node)"), next);
	assert_int_equal(child(t, next, "prev. (*main.Node)"), next);
	assert_int_equal(find(t, next, "prev. (*main.Node)"), next); /* now interned */
	/* the depth limit: a 4th named node is its parent */
	a = child(t, next, "x. (main.A)");
	b = child(t, a, "y. (main.B)");
	assert_int_equal(b, a);
	assert_int_equal(find(t, a, "z. (main.C)"), a);
	hr_chains_free(t);
}

/* Without folding (the default of a new tree), every link is a node. */
static void test_no_fold_by_default(void **state)
{
	struct hr_chains *t = hr_chains_new(0);
	uint32_t head = child(t, HR_CHAINS_TOP, "main.head");
	uint32_t next = child(t, head, "next. (*main.Node)");

	assert_int_not_equal(child(t, next, "next. (*main.Node)"), next);
	hr_chains_free(t);
}

static void test_examples_keep_the_biggest(void **state)
{
	struct hr_chains *t = hr_chains_new(0), *folded;
	uint32_t a, e0, e1, fe;
	const struct hr_chain_example *ex;
	size_t n;

	(void)state;
	assert_non_null(t);
	a = hr_chains_child(t, HR_CHAINS_TOP, "main.a", 6);
	assert_int_equal(hr_chains_offer_example(t, a, 0x100, 8), HR_OK); /* off: ignored */
	hr_chains_examples(t, a, &n);
	assert_int_equal(n, 0);
	hr_chains_keep_examples(t, 2);
	assert_int_equal(hr_chains_examples_kept(t), 2);
	for (uint64_t k = 1; k <= 5; k++) /* sizes 10, 50, 20, 50, 5 */
		assert_int_equal(hr_chains_offer_example(t, a, 0x1000 * k,
							 (uint64_t[]){ 10, 50, 20, 50, 5 }[k - 1]),
				 HR_OK);
	ex = hr_chains_examples(t, a, &n);
	assert_int_equal(n, 2);
	assert_int_equal(ex[0].addr, 0x2000); /* 50, offered first among the equal */
	assert_int_equal(ex[1].addr, 0x4000);
	/* folding elements merges their examples, the biggest kept */
	e0 = hr_chains_child(t, a, "[0]. (*T)", 9);
	e1 = hr_chains_child(t, a, "[10+]. (*T)", 11);
	assert_int_equal(hr_chains_offer_example(t, e0, 0xa0, 7), HR_OK);
	assert_int_equal(hr_chains_offer_example(t, e1, 0xb0, 9), HR_OK);
	assert_int_equal(hr_chains_offer_example(t, e1, 0xc0, 3), HR_OK);
	folded = hr_chains_fold_elements(t);
	assert_non_null(folded);
	fe = hr_chains_child(folded, hr_chains_child(folded, HR_CHAINS_TOP, "main.a", 6),
			     "[*]. (*T)", 9);
	ex = hr_chains_examples(folded, fe, &n);
	assert_int_equal(n, 2);
	assert_int_equal(ex[0].addr, 0xb0);
	assert_int_equal(ex[1].addr, 0xa0);
	hr_chains_free(folded);
	hr_chains_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_children_are_made_once),
		cmocka_unit_test(test_fold_elements),
		cmocka_unit_test(test_fold_recursion),
		cmocka_unit_test(test_find_changes_nothing),
		cmocka_unit_test(test_no_fold_by_default),
		cmocka_unit_test(test_depth_limit_cuts_and_charges_the_last_node),
		cmocka_unit_test(test_many_nodes_and_names),
		cmocka_unit_test(test_examples_keep_the_biggest),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
