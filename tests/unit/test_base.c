/* SPDX-License-Identifier: Apache-2.0 */
/* test_base.c - the shared helpers: errors, arrays, checked arithmetic, bit vectors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "heapref/base.h"

static void test_error_keeps_first(void **state)
{
	struct hr_error err = { 0 };

	assert_int_equal(hr_error_set(&err, HR_EINPUT, "first %d", 1), HR_EINPUT);
	assert_int_equal(hr_error_set(&err, HR_ENOMEM, "second"), HR_ENOMEM);
	assert_int_equal(err.code, HR_EINPUT);
	assert_string_equal(err.msg, "first 1");
}

/* A name from the input with a newline or an escape in it leaves the message one line. */
static void test_error_is_one_line(void **state)
{
	struct hr_error err = { 0 };

	(void)state;
	hr_error_set(&err, HR_EINPUT, "f: section %s: bad", ".da\nta\x1b[2J\x7f");
	assert_string_equal(err.msg, "f: section .da?ta?[2J?: bad");
}

static void test_checked_arithmetic(void **state)
{
	uint64_t out = 7;

	assert_true(hr_add_ok(1, 2, &out));
	assert_int_equal(out, 3);
	assert_false(hr_add_ok(UINT64_MAX, 1, &out));
	assert_int_equal(out, 3);
	assert_true(hr_mul_ok(UINT64_C(1) << 31, UINT64_C(1) << 32, &out));
	assert_false(hr_mul_ok(UINT64_C(1) << 32, UINT64_C(1) << 32, &out));
	assert_true(hr_mul_ok(0, UINT64_MAX, &out));
	assert_int_equal(out, 0);
}

static void test_array_push_zeroes(void **state)
{
	uint64_t *items = NULL;
	size_t n = 0, cap = 0, i;

	for (i = 0; i < 1000; i++) {
		uint64_t *slot = hr_array_push((void **)&items, &n, &cap, sizeof(*items));

		assert_non_null(slot);
		assert_int_equal(*slot, 0);
		*slot = i * 3;
	}
	assert_int_equal(n, 1000);
	assert_true(cap >= 1000);
	for (i = 0; i < 1000; i++)
		assert_int_equal(items[i], i * 3);
	free(items);
}

static void test_bit_next(void **state)
{
	uint64_t bits[3] = { 0 };

	hr_bit_set(bits, 3);
	hr_bit_set(bits, 64);
	hr_bit_set(bits, 190);
	assert_int_equal(hr_bit_next(bits, 0, 192), 3);
	assert_int_equal(hr_bit_next(bits, 4, 192), 64);
	assert_int_equal(hr_bit_next(bits, 65, 192), 190);
	assert_int_equal(hr_bit_next(bits, 65, 150), 150);
	assert_int_equal(hr_bit_next(bits, 191, 192), 192);
	hr_bit_clear(bits, 64);
	assert_false(hr_bit_get(bits, 64));
	assert_int_equal(hr_bit_next(bits, 4, 192), 190);
}

struct keyed {
	uint32_t pad;
	uint64_t addr;
};

static void test_count_key_at_most(void **state)
{
	const struct keyed items[] = { { 0, 10 }, { 0, 20 }, { 0, 20 }, { 0, 35 } };
	const size_t n = sizeof(items) / sizeof(items[0]), off = offsetof(struct keyed, addr);

	assert_int_equal(hr_count_key_at_most(items, n, sizeof(items[0]), off, 9), 0);
	assert_int_equal(hr_count_key_at_most(items, n, sizeof(items[0]), off, 10), 1);
	assert_int_equal(hr_count_key_at_most(items, n, sizeof(items[0]), off, 20), 3);
	assert_int_equal(hr_count_key_at_most(items, n, sizeof(items[0]), off, 34), 3);
	assert_int_equal(hr_count_key_at_most(items, n, sizeof(items[0]), off, UINT64_MAX), 4);
	assert_int_equal(hr_count_key_at_most(NULL, 0, sizeof(items[0]), off, 5), 0);
}

static int cmp_u64(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;

	return (a > b) - (a < b);
}

/* hr_sort_u64 against qsort: keys of every width (passes skipped where all agree). */
static void test_sort_u64(void **state)
{
	uint64_t x = 0x2545f4914f6cdd1du;

	(void)state;
	for (unsigned bits = 1; bits <= 64; bits += 7) {
		size_t n = 1000 + bits * 37;
		uint64_t *a = malloc(n * sizeof(*a)), *b = malloc(n * sizeof(*b));

		assert_non_null(a);
		assert_non_null(b);
		for (size_t i = 0; i < n; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			a[i] = b[i] = bits == 64 ? x : x & ((UINT64_C(1) << bits) - 1);
		}
		assert_int_equal(hr_sort_u64(a, n), HR_OK);
		qsort(b, n, sizeof(*b), cmp_u64);
		assert_memory_equal(a, b, n * sizeof(*a));
		free(a);
		free(b);
	}
	assert_int_equal(hr_sort_u64(NULL, 0), HR_OK);
}

/* hr_calloc_faulted: zeroed, as calloc(), also where freed memory is given again. */
static void test_calloc_faulted_zeroed(void **state)
{
	const size_t n = ((size_t)5 << 20) + 3; /* pages and a tail */
	uint8_t *dirty = malloc(n), *p;

	(void)state;
	assert_non_null(dirty);
	memset(dirty, 0xa5, n);
	free(dirty);
	for (size_t size = 1; size <= 8; size *= 8) {
		assert_non_null(p = hr_calloc_faulted(n / size, size));
		for (size_t i = 0; i < n / size * size; i++)
			if (p[i])
				fail_msg("byte %zu is %u", i, p[i]);
		memset(p, 0x5a, n / size * size);
		free(p);
	}
	assert_non_null(p = hr_calloc_faulted(1, 1));
	assert_int_equal(p[0], 0);
	free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_error_keeps_first),
		cmocka_unit_test(test_error_is_one_line),
		cmocka_unit_test(test_checked_arithmetic),
		cmocka_unit_test(test_array_push_zeroes),
		cmocka_unit_test(test_bit_next),
		cmocka_unit_test(test_count_key_at_most),
		cmocka_unit_test(test_sort_u64),
		cmocka_unit_test(test_calloc_faulted_zeroed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
