/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_scan_layouts.c - the scanner's pure helpers: the Go minor version of a dump's
 * build version string (which decides malloc headers), the "any pointer word left
 * in this range" test that lets the typed walk skip pointer-free values, and the names
 * of a hash-trie's types derived from its node's (sync_layouts.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "scan_internal.h"

static unsigned minor_of(const char *s)
{
	struct hr_bytes b = { (const uint8_t *)s, strlen(s) };

	return layout_go_minor(&b);
}

static void test_go_minor(void **state)
{
	(void)state;
	assert_int_equal(minor_of("go1.26.8"), 26);
	assert_int_equal(minor_of("go1.22.0"), 22);
	assert_int_equal(minor_of("go1.19"), 19);
	assert_int_equal(minor_of("devel go1.27-abcdef Tue"), 27);
	assert_int_equal(minor_of("go1.22rc1"), 22);
	assert_int_equal(minor_of(""), 0);
	assert_int_equal(minor_of("go1."), 0);
	assert_int_equal(minor_of("fieldtrack"), 0); /* go1.5-era dumps wrote GOEXPERIMENT */
}

static void test_region_has_ptrs(void **state)
{
	uint8_t mem[64 * 8] = { 0 };
	uint64_t bits[1] = { (UINT64_C(1) << 3) | (UINT64_C(1) << 40) };
	struct region r = { .addr = 0x1000, .len = sizeof(mem), .data = mem, .bits = bits,
			    .nwords = 64, .ps = 8 };

	(void)state;
	assert_true(region_has_ptrs(&r, 0x1000, 32));         /* words 0-3 include 3 */
	assert_false(region_has_ptrs(&r, 0x1000, 24));        /* words 0-2 */
	assert_true(region_has_ptrs(&r, 0x1000 + 3 * 8, 1));  /* one byte of word 3 */
	assert_false(region_has_ptrs(&r, 0x1000 + 4 * 8, 36 * 8));
	assert_true(region_has_ptrs(&r, 0x1000 + 4 * 8, 37 * 8)); /* reaches word 40 */
	assert_false(region_has_ptrs(&r, 0x0ff8, 0x20));      /* starts before: words 0-2 */
	assert_true(region_has_ptrs(&r, 0x0ff8, 0x28));       /* ... and word 3 */
	assert_false(region_has_ptrs(&r, 0x1000 + 41 * 8, 1000)); /* runs past its end */
	assert_false(region_has_ptrs(&r, 0x2000, 8));          /* outside */
	assert_false(region_has_ptrs(&r, 0x1000, 0));          /* empty */
	bits[0] = 0;
	assert_false(region_has_ptrs(&r, 0x1000, sizeof(mem)));
}

static void assert_arg(const char *name, unsigned k, const char *expected)
{
	size_t n = 0;
	const char *arg = sync_type_arg(name, k, &n);

	if (!expected) {
		assert_null(arg);
		return;
	}
	assert_non_null(arg);
	assert_int_equal(n, strlen(expected));
	assert_memory_equal(arg, expected, n);
}

static void test_type_args(void **state)
{
	(void)state;
	assert_arg("internal/sync.node[interface {},interface {}]", 0, "interface {}");
	assert_arg("internal/sync.node[interface {},interface {}]", 1, "interface {}");
	assert_arg("internal/sync.node[interface {},interface {}]", 2, NULL);
	/* commas inside brackets, braces and parentheses belong to the argument */
	assert_arg("p.T[map[string]int,func(int, string) error]", 0, "map[string]int");
	assert_arg("p.T[map[string]int,func(int, string) error]", 1, "func(int, string) error");
	assert_arg("p.T[struct { a int; b [2]string },*internal/abi.Type]", 1,
		   "*internal/abi.Type");
	assert_arg("unique.node[string]", 0, "string");
	assert_arg("unique.node[string]", 1, NULL);
	assert_arg("sync.Map", 0, NULL);
	assert_arg("p.T[]", 0, NULL);
}

static void assert_sibling(const char *node, const char *kind, enum type_args as,
			   const char *expected)
{
	char buf[128];
	size_t n = sync_sibling_name(node, kind, as, buf, sizeof(buf));

	if (!expected) {
		assert_int_equal(n, 0);
		return;
	}
	assert_int_equal(n, strlen(expected));
	assert_string_equal(buf, expected);
}

static void test_trie_siblings(void **state)
{
	const char *node = "internal/sync.node[interface {},interface {}]";

	(void)state;
	assert_sibling(node, "entry", ARGS_AS_IS, "internal/sync.entry[interface {},interface {}]");
	assert_sibling(node, "indirect", ARGS_AS_IS,
		       "internal/sync.indirect[interface {},interface {}]");
	/* Go 1.27 has the entry by its shape only */
	assert_sibling(node, "entry", ARGS_SHAPES,
		       "internal/sync.entry[go.shape.interface {},go.shape.interface {}]");
	node = "internal/concurrent.node[*internal/abi.Type,interface {}]";
	assert_sibling(node, "entry", ARGS_SHAPES,
		       "internal/concurrent.entry[go.shape.*internal/abi.Type,go.shape.interface {}]");
	assert_sibling(node, "entry", ARGS_SHAPES_PTR_UINT8,
		       "internal/concurrent.entry[go.shape.*uint8,go.shape.interface {}]");
	assert_sibling("unique.node[string]", "indirect", ARGS_AS_IS, "unique.indirect[string]");
	/* not a node's name */
	assert_sibling("internal/sync.entry[interface {},interface {}]", "entry", ARGS_AS_IS, NULL);
	assert_sibling("p.mynode[int]", "entry", ARGS_AS_IS, NULL);
	assert_sibling("node[int]", "entry", ARGS_AS_IS, NULL);
	assert_sibling("sync.node", "entry", ARGS_AS_IS, NULL);
	/* too long for the buffer */
	assert_sibling("p.node[aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		       "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa]", "indirect",
		       ARGS_AS_IS, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_go_minor),
		cmocka_unit_test(test_region_has_ptrs),
		cmocka_unit_test(test_type_args),
		cmocka_unit_test(test_trie_siblings),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
