/*
 * test_dump_index.c - the heap object index: sorting, address -> object lookups
 * (interior pointers, gaps, objects spanning pages, objects of 16 MiB and more) and
 * pointer bits, checked against a brute-force search over the same objects.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dumpbuf.h"
#include "heapref/dump.h"

#define HEAP_START UINT64_C(0xc000000000)
#define HEAP_END (HEAP_START + (UINT64_C(1) << 32))

struct model_obj {
	uint64_t addr;
	uint64_t size;
};

static uint64_t rng_state = 0x243f6a8885a308d3;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static struct hr_dump *open_ok(struct dumpbuf *b)
{
	struct hr_error err = { 0 };
	struct hr_dump *d = hr_dump_open_bytes(b->bytes, b->len, "t.dump", &err);

	if (!d)
		fail_msg("unexpected error: %s", err.msg);
	return d;
}

static int64_t brute_find(const struct model_obj *objs, size_t n, uint64_t addr)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (addr >= objs[i].addr && addr - objs[i].addr < objs[i].size)
			return (int64_t)i;
	return -1;
}

static int cmp_model(const void *a, const void *b)
{
	const struct model_obj *x = a, *y = b;

	return (x->addr > y->addr) - (x->addr < y->addr);
}

/*
 * Spans of uniform object size at random pages, written in shuffled span order with
 * some slots left free, as Go writes them: the index must sort them and find each.
 */
static void test_lookup_matches_brute_force(void **state)
{
	enum { SPANS = 300, MAX_OBJS = 20000 };
	struct model_obj *model = calloc(MAX_OBJS, sizeof(*model));
	uint64_t span_page[SPANS];
	struct dumpbuf b = { 0 };
	size_t n = 0, s, i;
	struct hr_dump *d;

	assert_non_null(model);
	for (s = 0; s < SPANS; s++) /* distinct pages, 4 apart so spans never overlap */
		span_page[s] = (s * 7919) % 4096 * 4;
	db_header(&b);
	db_params(&b, HEAP_START, HEAP_END);
	for (s = 0; s < SPANS && n < MAX_OBJS - 2048; s++) {
		static const uint64_t sizes[] = { 8, 16, 48, 128, 1024, 4096, 12288, 32768 };
		uint64_t size = sizes[rng() % 8], base = HEAP_START + (span_page[s] << 13);
		uint64_t span_bytes = size > 8192 ? size : 8192 * (1 + rng() % 2);

		for (uint64_t off = 0; off + size <= span_bytes; off += size) {
			uint64_t ptrs[2] = { 0, size - 8 };

			if (rng() % 4 == 0)
				continue; /* a free slot: not in the dump */
			db_object(&b, base + off, size, (uint8_t)n, ptrs, size >= 16 ? 2 : 1);
			model[n++] = (struct model_obj){ base + off, size };
		}
	}
	db_eof(&b);
	d = open_ok(&b);
	qsort(model, n, sizeof(*model), cmp_model);

	assert_int_equal(hr_dump_object_count(d), n);
	for (i = 0; i < n; i++) {
		struct hr_object o = hr_dump_object(d, i);

		assert_int_equal(o.addr, model[i].addr);
		assert_int_equal(o.size, model[i].size);
		assert_int_equal(hr_dump_object_at(d, o.addr), i);
		assert_int_equal(hr_dump_object_at(d, o.addr + o.size - 1), i);
		assert_true(hr_dump_heap_ptr_bit(d, o.addr));
		assert_true(hr_dump_heap_ptr_bit(d, o.addr + o.size - 8));
		if (o.size >= 32)
			assert_false(hr_dump_heap_ptr_bit(d, o.addr + 8));
	}
	for (i = 0; i < 200000; i++) {
		uint64_t addr = HEAP_START + rng() % ((UINT64_C(4096) * 4 + 8) << 13);

		assert_int_equal(hr_dump_object_at(d, addr), brute_find(model, n, addr));
	}
	assert_int_equal(hr_dump_object_at(d, 0), -1);
	assert_int_equal(hr_dump_object_at(d, UINT64_MAX), -1);
	hr_dump_free(d);
	dumpbuf_release(&b);
	free(model);
}

/* Objects spanning many pages, and one of 16 MiB+ (its size lives in the side table). */
static void test_large_objects(void **state)
{
	const uint64_t huge = (UINT64_C(16) << 20) + 8192, big = 5 * 8192 + 512;
	const uint64_t huge_addr = HEAP_START + (UINT64_C(64) << 20), big_addr = HEAP_START + 8192;
	uint64_t ptrs[] = { 0, huge - 8, 3 * 8192 };
	struct dumpbuf b = { 0 };
	struct hr_dump *d;

	db_header(&b);
	db_params(&b, HEAP_START, HEAP_END);
	db_object(&b, huge_addr, (size_t)huge, 1, ptrs, 3);
	db_object(&b, HEAP_START, 16, 2, NULL, 0);
	db_object(&b, big_addr, (size_t)big, 3, ptrs + 2, 1);
	db_object(&b, huge_addr + huge, 16, 4, NULL, 0);
	db_eof(&b);
	d = open_ok(&b);
	assert_int_equal(hr_dump_object_count(d), 4);
	assert_int_equal(hr_dump_object(d, 0).addr, HEAP_START);
	assert_int_equal(hr_dump_object(d, 1).size, big);
	assert_int_equal(hr_dump_object(d, 2).size, huge);
	assert_int_equal(hr_dump_object(d, 2).data[0], 1);
	assert_int_equal(hr_dump_object(d, 2).data[huge - 1], 1);
	assert_int_equal(hr_dump_object_bytes(d), huge + big + 32);
	/* every page of the large objects leads back to them */
	for (uint64_t off = 0; off < huge; off += 4096)
		assert_int_equal(hr_dump_object_at(d, huge_addr + off), 2);
	for (uint64_t off = 0; off < big; off += 512)
		assert_int_equal(hr_dump_object_at(d, big_addr + off), 1);
	assert_int_equal(hr_dump_object_at(d, big_addr + big), -1);
	assert_int_equal(hr_dump_object_at(d, huge_addr + huge), 3);
	assert_int_equal(hr_dump_object_at(d, huge_addr + huge + 16), -1);
	assert_true(hr_dump_heap_ptr_bit(d, huge_addr));
	assert_true(hr_dump_heap_ptr_bit(d, huge_addr + huge - 8));
	assert_true(hr_dump_heap_ptr_bit(d, huge_addr + 3 * 8192));
	assert_false(hr_dump_heap_ptr_bit(d, huge_addr + 8));
	assert_true(hr_dump_heap_ptr_bit(d, big_addr + 3 * 8192));
	assert_int_equal(hr_dump_object_ptr_count(d, 2), 3);
	assert_int_equal(hr_dump_heap_ptr_words(d), 4);
	hr_dump_free(d);
	dumpbuf_release(&b);
}

/* Field lists in any order, with repeats, give the same bitmap. */
static void test_unordered_field_list(void **state)
{
	uint64_t ptrs[] = { 56, 0, 24, 56, 8, 0 };
	struct dumpbuf b = { 0 };
	struct hr_dump *d;

	db_header(&b);
	db_params(&b, HEAP_START, HEAP_END);
	db_object(&b, HEAP_START + 64, 64, 0, ptrs, 6);
	db_eof(&b);
	d = open_ok(&b);
	for (uint64_t w = 0; w < 8; w++)
		assert_int_equal(hr_dump_heap_ptr_bit(d, HEAP_START + 64 + 8 * w),
				 w == 0 || w == 1 || w == 3 || w == 7);
	assert_int_equal(hr_dump_object_ptr_count(d, 0), 4);
	hr_dump_free(d);
	dumpbuf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lookup_matches_brute_force),
		cmocka_unit_test(test_large_objects),
		cmocka_unit_test(test_unordered_field_list),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
