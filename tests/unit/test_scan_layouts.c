/*
 * test_scan_layouts.c - the scanner's pure helpers: the Go minor version of a dump's
 * build version string (which decides malloc headers), and the "any pointer word left
 * in this range" test that lets the typed walk skip pointer-free values.
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_go_minor),
		cmocka_unit_test(test_region_has_ptrs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
