/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_dump_index.c - the heap object index: sorting, address -> object lookups
 * (interior pointers, gaps, objects spanning pages, objects of 16 MiB and more) and
 * pointer bits, checked against a brute-force search over the same objects; the packed
 * 4-byte entries and their fallbacks, and the merge of two indexes.
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <sys/mman.h>
#include <unistd.h>

#include "model_internal.h" /* the index itself, for the lookup fast paths */
#include "dumpbuf.h"
#include "dumpcheck.h"

/* Contents "at" off: the index keeps where contents are as an integer; the tests give
 * small numbers and get them back. */
static const uint8_t *at(uint64_t off)
{
	return (const uint8_t *)(uintptr_t)off;
}
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

/* Objects spanning many pages, and one of 16 MiB+ (a page run of its own gives its size). */
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

/* The plain answer: the last object starting at or before addr, if it holds addr. */
static int64_t sorted_find(const struct model_obj *objs, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (objs[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || addr - objs[lo - 1].addr >= objs[lo - 1].size)
		return -1;
	return (int64_t)lo - 1;
}

static const struct heap_page *index_page(const struct heap_index *idx, uint64_t addr)
{
	for (size_t i = 0; i < idx->page_slots; i++)
		if (idx->pages[i].page_no == addr >> HEAP_PAGE_SHIFT)
			return &idx->pages[i];
	fail_msg("no page for 0x%llx", (unsigned long long)addr);
	return NULL;
}

/* Objects of `size` from page offset `off` in the run of pages at page `page`, slot k
 * left free if is_free(k); returns the new count. */
static size_t add_run(struct model_obj *m, size_t n, uint64_t base, uint64_t page, uint64_t off,
		      uint64_t size, uint64_t bytes, bool (*is_free)(uint64_t))
{
	for (uint64_t k = 0; off + (k + 1) * size <= bytes; k++)
		if (!is_free || !is_free(k))
			m[n++] = (struct model_obj){ base + (page << HEAP_PAGE_SHIFT) + off + k * size,
						     size };
	return n;
}

static bool every_third(uint64_t k) { return k % 3 == 1; }
static bool sparse(uint64_t k) { return k % 100 != 0; }
static bool after_100(uint64_t k) { return k >= 100; }
static bool ends_free(uint64_t k) { return k == 0 || k == 511; }
static bool random_half(uint64_t k) { return rng() % 2 == 0; }
static bool random_fifth(uint64_t k) { return rng() % 5 == 0; }

/*
 * Builds one page layout of each kind struct heap_page tells apart at `base`: uniform
 * pages with no free slot, with free slots (slot map), with too few objects for a map,
 * with only trailing free slots; pages of mixed sizes or off-grid strides; objects
 * crossing into a grid page; a span of objects larger than a page.
 */
static size_t build_layouts(struct model_obj *m, uint64_t base)
{
	size_t n = 0;

	n = add_run(m, n, base, 0, 0, 48, 2 * 8192, NULL);      /* pages 0, 1: dense, 1 at 16 */
	n = add_run(m, n, base, 3, 0, 16, 8192, every_third);   /* 3: slot map */
	n = add_run(m, n, base, 5, 0, 8, 8192, sparse);         /* 5: too sparse for a map */
	n = add_run(m, n, base, 6, 0, 8, 8192, after_100);      /* 6: dense, free tail */
	for (uint64_t off = 0; off < 8192; off += 48)           /* 7: sizes 16 and 32 */
		m[n++] = (struct model_obj){ base + (7 << 13) + off, off % 96 ? 32 : 16 };
	for (uint64_t off = 0; off + 16 <= 8192; off += 24)     /* 8: off the grid */
		m[n++] = (struct model_obj){ base + (8 << 13) + off, 16 };
	m[n++] = (struct model_obj){ base + (9 << 13) + 256, 3 * 8192 - 512 }; /* 9..11 */
	n = add_run(m, n, base, 11, 8192 - 256, 64, 8192, NULL); /* 11: from 7936, dense */
	n = add_run(m, n, base, 12, 0, 4096, 8192, NULL);        /* 12: two objects */
	n = add_run(m, n, base, 13, 0, 1152, 9 * 8192, random_fifth); /* 13..21 */
	n = add_run(m, n, base, 24, 0, 16, 8192, ends_free);     /* 24: dense from 16 */
	n = add_run(m, n, base, 26, 0, 32, 8192, random_half);   /* 26: slot map */
	n = add_run(m, n, base, 27, 8, 8, 8192, random_half);    /* 27: slot map, 8-byte */
	return n;
}

static void check_layouts(const struct heap_index *idx, const struct model_obj *m, size_t n,
			  uint64_t base)
{
	assert_int_equal(index_page(idx, base)->stride, 48);
	assert_true(index_page(idx, base)->dense);
	assert_int_equal(index_page(idx, base + 8192)->start, 16);
	assert_true(index_page(idx, base + 8192)->dense);
	assert_int_equal(index_page(idx, base + 3 * 8192)->stride, 16);
	assert_false(index_page(idx, base + 3 * 8192)->dense);
	assert_int_equal(index_page(idx, base + 5 * 8192)->stride, 0);
	assert_true(index_page(idx, base + 6 * 8192)->dense);
	assert_int_equal(index_page(idx, base + 7 * 8192)->stride, 0);
	assert_int_equal(index_page(idx, base + 8 * 8192)->stride, 0);
	assert_int_equal(index_page(idx, base + 11 * 8192)->start, 8192 - 256);
	assert_true(index_page(idx, base + 11 * 8192)->dense);
	assert_int_equal(index_page(idx, base + 24 * 8192)->start, 16);
	assert_true(index_page(idx, base + 24 * 8192)->dense);
	assert_false(index_page(idx, base + 26 * 8192)->dense);
	assert_int_equal(index_page(idx, base + 27 * 8192)->stride, 8);
	assert_false(index_page(idx, base + 27 * 8192)->dense);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(heap_index_find(idx, m[i].addr), i);
		assert_int_equal(heap_index_find(idx, m[i].addr + m[i].size - 1), i);
		assert_int_equal(heap_index_find(idx, m[i].addr + m[i].size),
				 sorted_find(m, n, m[i].addr + m[i].size));
	}
	/* every byte of the pages and around them */
	for (uint64_t addr = base - 64; addr < base + 29 * 8192; addr++)
		if (heap_index_find(idx, addr) != sorted_find(m, n, addr))
			fail_msg("0x%llx: %lld, not %lld", (unsigned long long)addr,
				 (long long)heap_index_find(idx, addr), (long long)sorted_find(m, n, addr));
}

/*
 * The lookup's fast paths (grid slots, slot maps, the direct page table) give the plain
 * binary search's answer everywhere; so does the hash when pages lie far apart.
 */
static void test_grid_lookups(void **state)
{
	const uint64_t far = UINT64_C(1) << 40;
	struct model_obj *m = calloc(40000, sizeof(*m));
	struct hr_error err = { 0 };
	struct heap_index idx;
	size_t n, n2;

	assert_non_null(m);
	n = build_layouts(m, HEAP_START);
	assert_int_equal(heap_index_init(&idx, 8), HR_OK);
	for (size_t i = n; i-- > 0;) /* backwards: the index sorts them */
		assert_int_equal(heap_index_add(&idx, m[i].addr, m[i].size, NULL), HR_OK);
	assert_int_equal(heap_index_finish(&idx, "t", NULL, 0, &err), HR_OK);
	assert_true(idx.page_direct);
	check_layouts(&idx, m, n, HEAP_START);
	heap_index_release(&idx);

	/* the same layouts twice, 1 TiB apart: too sparse for the direct table */
	n = build_layouts(m, HEAP_START);
	n2 = n + build_layouts(m + n, HEAP_START + far);
	assert_int_equal(heap_index_init(&idx, 8), HR_OK);
	for (size_t i = 0; i < n2; i++)
		assert_int_equal(heap_index_add(&idx, m[i].addr, m[i].size, NULL), HR_OK);
	assert_int_equal(heap_index_finish(&idx, "t", NULL, 0, &err), HR_OK);
	assert_false(idx.page_direct);
	check_layouts(&idx, m, n2, HEAP_START);
	check_layouts(&idx, m, n2, HEAP_START + far);
	assert_int_equal(heap_index_find(&idx, HEAP_START + far / 2), -1);
	heap_index_release(&idx);
	free(m);
}

/* Overlaps are caught within a grid page and across pages. */
static void test_overlap_found(void **state)
{
	static const struct model_obj cases[][3] = {
		{ { HEAP_START, 16 }, { HEAP_START + 16, 16 }, { HEAP_START + 24, 16 } },
		{ { HEAP_START + 8192 - 16, 32 }, { HEAP_START + 8192 + 8, 16 }, { HEAP_START + 8192 + 24, 16 } },
	};

	for (size_t c = 0; c < 2; c++) {
		struct hr_error err = { 0 };
		struct heap_index idx;

		assert_int_equal(heap_index_init(&idx, 8), HR_OK);
		for (size_t i = 0; i < 3; i++)
			assert_int_equal(heap_index_add(&idx, cases[c][i].addr, cases[c][i].size, NULL),
					 HR_OK);
		assert_int_equal(heap_index_finish(&idx, "t", NULL, 0, &err), HR_EINPUT);
		assert_non_null(strstr(err.msg, "overlaps"));
		heap_index_release(&idx);
	}
}

/*
 * The pages of a large index are scanned by two threads, the second half's first page
 * checked against the first half's last object: 70,000 pages of dense grids, grids with
 * free slots (mapped after the scan) and lone objects read back; an overlap across the
 * halves' boundary is caught, and of two overlaps the one at the lower address named.
 * (The halves are of objects: the pages hold 2, 3 and 1 in turn, so the middle object,
 * the 70,000th, is the first of page 35,000, SPLIT_PAGES / 2.)
 */
enum { SPLIT_PAGES = 70000 };

static size_t split_layout(struct model_obj *m, uint64_t page_no)
{
	uint64_t at = HEAP_START + page_no * 8192;

	switch (page_no % 3) {
	case 0: /* a dense grid */
		m[0] = (struct model_obj){ at, 16 };
		m[1] = (struct model_obj){ at + 16, 16 };
		return 2;
	case 1: /* a grid with free slots */
		m[0] = (struct model_obj){ at, 32 };
		m[1] = (struct model_obj){ at + 64, 32 };
		m[2] = (struct model_obj){ at + 160, 32 };
		return 3;
	default:
		m[0] = (struct model_obj){ at, 4096 };
		return 1;
	}
}

static int index_split(struct heap_index *idx, const struct model_obj *extra, size_t nextra,
		       struct hr_error *err)
{
	struct model_obj m[3];

	assert_int_equal(heap_index_init(idx, 8), HR_OK);
	for (uint64_t pg = 0; pg < SPLIT_PAGES; pg++)
		for (size_t k = 0, n = split_layout(m, pg); k < n; k++)
			assert_int_equal(heap_index_add(idx, m[k].addr, m[k].size, at(0)), HR_OK);
	for (size_t k = 0; k < nextra; k++)
		assert_int_equal(heap_index_add(idx, extra[k].addr, extra[k].size, at(0)), HR_OK);
	return heap_index_finish(idx, "t", NULL, 0, err);
}

static void test_scan_split(void **state)
{
	const uint64_t mid = SPLIT_PAGES / 2, page = 8192;
	/* an object of page mid - 1, the first half's last, that reaches into page mid */
	const struct model_obj across = { HEAP_START + (mid - 1) * page + 4096, page };
	const struct model_obj both[] = { across, { HEAP_START + 11 * page + 4096, page } };
	struct hr_error err = { 0 };
	struct heap_index idx;
	struct model_obj m[3];
	struct heap_span span;
	int64_t i = 0;
	char want[128];

	(void)state;
	assert_int_equal(index_split(&idx, NULL, 0, &err), HR_OK);
	for (uint64_t pg = 0; pg < SPLIT_PAGES; pg++)
		for (size_t k = 0, n = split_layout(m, pg); k < n; k++, i++) {
			assert_int_equal(heap_index_locate(&idx, m[k].addr + m[k].size - 1, &span), i);
			assert_int_equal(span.addr, m[k].addr);
			assert_int_equal(span.size, m[k].size);
		}
	assert_int_equal(idx.nobj, (size_t)i);
	/* the free slots of grid pages in both halves: mapped, so found empty */
	assert_int_equal(heap_index_find(&idx, HEAP_START + 1 * page + 32), -1);
	assert_int_equal(heap_index_find(&idx, HEAP_START + (mid + 2) * page + 100), -1);
	assert_int_equal(heap_index_find(&idx, HEAP_START + (SPLIT_PAGES - 3) * page + 200), -1);
	heap_index_release(&idx);

	assert_int_equal(index_split(&idx, &across, 1, &err), HR_EINPUT);
	snprintf(want, sizeof(want), "object at 0x%llx overlaps the object at 0x%llx",
		 (unsigned long long)(HEAP_START + mid * page), (unsigned long long)across.addr);
	if (!strstr(err.msg, want))
		fail_msg("%s, not %s", err.msg, want);
	heap_index_release(&idx);

	err = (struct hr_error){ 0 }; /* the first error set stays */
	assert_int_equal(index_split(&idx, both, 2, &err), HR_EINPUT);
	snprintf(want, sizeof(want), "object at 0x%llx overlaps the object at 0x%llx",
		 (unsigned long long)(HEAP_START + 12 * page), (unsigned long long)both[1].addr);
	if (!strstr(err.msg, want))
		fail_msg("%s, not %s", err.msg, want);
	heap_index_release(&idx);
}

/* Object i of idx reads back at addr, size bytes, its contents at off. */
static void check_page_object(const struct heap_index *idx, uint64_t i, uint64_t addr,
			      uint64_t size, uint64_t off)
{
	struct heap_span span;
	uint64_t got = heap_index_object(idx, (size_t)i, &span);

	if (got != off || span.addr != addr || span.size != size)
		fail_msg("object %llu: 0x%llx, %llu bytes, at %llu; expected 0x%llx, %llu, %llu",
			 (unsigned long long)i, (unsigned long long)span.addr,
			 (unsigned long long)span.size, (unsigned long long)got,
			 (unsigned long long)addr, (unsigned long long)size, (unsigned long long)off);
}

/*
 * An index whose final entries are 32 MB or more, at most 1/16 of its objects' bytes,
 * built on two processors: the entries are faulted in first and the runs copied in
 * address order by two threads (place_by_rank(); on one processor, in file order). The
 * pages are read in an order that is not their addresses', one of them whole; every
 * 16th page's objects, and the whole one's, read back.
 */
enum { RANK_PAGES = 84000, RANK_PER_PAGE = 100, RANK_SIZE = 80 };

static uint64_t rank_page(uint64_t k) /* the k-th page read: a permutation */
{
	return k * 7919 % RANK_PAGES;
}

static void test_place_by_rank(void **state)
{
	struct hr_error err = { 0 };
	struct heap_index idx;
	uint64_t off = 0;
	const uint64_t whole = rank_page(1000); /* page 23000, in the first half */

	(void)state;
	assert_int_equal(heap_index_init(&idx, 8), HR_OK);
	for (uint64_t k = 0; k < RANK_PAGES; k++) {
		uint64_t pg = rank_page(k), base = HEAP_START + pg * 8192;

		for (uint64_t j = 0; j < RANK_PER_PAGE; j++, off += RANK_SIZE + 8) {
			/* the whole page: its objects in reverse, so they fit no run */
			uint64_t slot = pg == whole ? RANK_PER_PAGE - 1 - j : j;

			assert_int_equal(heap_index_add(&idx, base + slot * RANK_SIZE, RANK_SIZE,
							at(off)), HR_OK);
		}
	}
	assert_int_equal(heap_index_finish(&idx, "t", NULL, 0, &err), HR_OK);
	assert_int_equal(idx.nobj, (size_t)RANK_PAGES * RANK_PER_PAGE);
	assert_int_equal(idx.nwhole, RANK_PER_PAGE); /* the one page whole */
	for (uint64_t k = 0; k < RANK_PAGES; k++) {
		uint64_t pg = rank_page(k);

		if (pg % 16 && pg != whole)
			continue;
		for (uint64_t j = 0; j < RANK_PER_PAGE; j++) {
			uint64_t slot = pg == whole ? RANK_PER_PAGE - 1 - j : j;

			check_page_object(&idx, pg * RANK_PER_PAGE + slot,
					  HEAP_START + pg * 8192 + slot * RANK_SIZE, RANK_SIZE,
					  (k * RANK_PER_PAGE + j) * (RANK_SIZE + 8));
		}
	}
	heap_index_release(&idx);
}

/*
 * An index whose final entries are under 32 MB, built from three chunks of entries read
 * in an order that is not their pages' addresses': the runs are copied in file order
 * (place_by_file_order()), the first half of them on another thread when there are two
 * processors, each chunk unmapped once read. Every object reads back.
 */
enum { FILE_PAGES = 2000, FILE_PER_PAGE = 300, FILE_SIZE = 24 };

static void test_place_by_file_order(void **state)
{
	struct hr_error err = { 0 };
	struct heap_index idx;
	uint64_t off = 0;

	(void)state;
	assert_int_equal(heap_index_init(&idx, 8), HR_OK);
	for (uint64_t k = 0; k < FILE_PAGES; k++) {
		uint64_t base = HEAP_START + k * 7919 % FILE_PAGES * 8192;

		for (uint64_t j = 0; j < FILE_PER_PAGE; j++, off += FILE_SIZE + 8)
			assert_int_equal(heap_index_add(&idx, base + j * FILE_SIZE, FILE_SIZE,
							at(off)), HR_OK);
	}
	assert_true(idx.nchunks >= 3);
	assert_int_equal(heap_index_finish(&idx, "t", NULL, 0, &err), HR_OK);
	assert_int_equal(idx.nobj, (size_t)FILE_PAGES * FILE_PER_PAGE);
	assert_int_equal(idx.nchunks, 0); /* all unmapped */
	for (uint64_t k = 0; k < FILE_PAGES; k++) {
		uint64_t pg = k * 7919 % FILE_PAGES;

		for (uint64_t j = 0; j < FILE_PER_PAGE; j++)
			check_page_object(&idx, pg * FILE_PER_PAGE + j,
					  HEAP_START + pg * 8192 + j * FILE_SIZE, FILE_SIZE,
					  (k * FILE_PER_PAGE + j) * (FILE_SIZE + 8));
	}
	heap_index_release(&idx);
}

/* An object as added to the index: where, how large, where its contents are. */
struct packed_obj {
	uint64_t addr;
	uint64_t size;
	uint64_t off;
};

static int cmp_packed(const void *a, const void *b)
{
	const struct packed_obj *x = a, *y = b;

	return (x->addr > y->addr) - (x->addr < y->addr);
}

/*
 * Every object of the model (in the order added; distinct addresses) reads back from
 * idx whole: its start, size and contents offset by index, and its index and span by
 * its first and last byte. The prefetch stages that do not read its contents (there
 * are none here) are safe.
 */
static void check_packed(const struct heap_index *idx, struct packed_obj *m, size_t n)
{
	qsort(m, n, sizeof(*m), cmp_packed);
	assert_int_equal(idx->nobj, n);
	for (size_t i = 0; i < n; i++) {
		struct heap_span span;
		uint64_t off = heap_index_object(idx, i, &span);

		if (span.addr != m[i].addr || span.size != m[i].size || off != m[i].off)
			fail_msg("object %zu: 0x%llx %llu bytes at %llu, not 0x%llx %llu at %llu", i,
				 (unsigned long long)span.addr, (unsigned long long)span.size,
				 (unsigned long long)off, (unsigned long long)m[i].addr,
				 (unsigned long long)m[i].size, (unsigned long long)m[i].off);
		assert_int_equal(heap_index_obj_size(idx, i), m[i].size);
		assert_int_equal(heap_index_locate(idx, m[i].addr, &span), i);
		assert_int_equal(span.addr, m[i].addr);
		assert_int_equal(span.size, m[i].size);
		assert_int_equal(heap_index_locate(idx, m[i].addr + m[i].size - 1, &span), i);
		heap_index_prefetch(idx, i, 0, HR_PREFETCH_ENTRY);
		heap_index_prefetch(idx, i, 0, HR_PREFETCH_CONTENTS);
	}
}

/*
 * The page table laid out directly over the objects' pages before any is added, as the
 * reader of a large file does (the file's size given as the largest there is).
 */
static void plan_pages(struct heap_index *idx, const struct packed_obj *m, size_t n)
{
	uint64_t lo = UINT64_MAX, hi = 0;

	for (size_t i = 0; i < n; i++) {
		lo = m[i].addr < lo ? m[i].addr : lo;
		hi = m[i].addr + m[i].size > hi ? m[i].addr + m[i].size : hi;
	}
	heap_index_plan_pages(idx, lo, hi, UINT64_MAX);
	assert_true(idx->page_direct);
}

/* Adds the model's objects to a new index (its pages planned, or hashed) and finishes it. */
static void index_packed(struct heap_index *idx, const struct packed_obj *m, size_t n,
			 bool planned)
{
	struct hr_error err = { 0 };

	assert_int_equal(heap_index_init(idx, 8), HR_OK);
	if (planned)
		plan_pages(idx, m, n);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(heap_index_add(idx, m[i].addr, m[i].size, at(m[i].off)), HR_OK);
	assert_int_equal(heap_index_finish(idx, "t", NULL, 0, &err), HR_OK);
}

/*
 * Objects whose page's entries cannot hold them: contents beyond the 19-bit offset from
 * the page's base or before it, sizes that differ, addresses that go down, a page whose
 * objects are not together in the file; sizes of 16 MiB and more, contents beyond 4 GiB
 * in the file, objects across page boundaries, pages with free slots, and blocks of 64
 * objects over many pages. None is truncated: each page falls back to whole objects.
 */
static void test_entry_packing(void **state)
{
	const uint64_t page = HEAP_START + 8192 * 16, gib4 = UINT64_C(5) << 30;
	struct packed_obj *m = calloc(4096, sizeof(*m)), *w = calloc(4096, sizeof(*w));
	struct heap_index idx;
	size_t n = 0;

	assert_non_null(m);
	assert_non_null(w);
	/* a grid page with free slots, contents beyond 4 GiB, one at the page's end */
	for (uint64_t k = 0; k < 512; k++)
		if (k % 3)
			m[n++] = (struct packed_obj){ page + 16 * k, 16, gib4 + 40 * k };
	/* an object across the boundary, then one at the next page's start... */
	m[n++] = (struct packed_obj){ page + 8192 + 8192 - 16, 32, 100 };
	m[n++] = (struct packed_obj){ page + 3 * 8192, 48, 200 };
	/* ... whose next contents are too far (19 bits), then before its base */
	m[n++] = (struct packed_obj){ page + 3 * 8192 + 48, 48, 200 + ENT_DELTA_MAX + 1 };
	m[n++] = (struct packed_obj){ page + 3 * 8192 + 96, 48, 100 };
	/* sizes that differ, and an address that goes down */
	m[n++] = (struct packed_obj){ page + 5 * 8192 + 64, 64, 1000 };
	m[n++] = (struct packed_obj){ page + 5 * 8192 + 128, 32, 1100 };
	m[n++] = (struct packed_obj){ page + 5 * 8192, 64, 1200 };
	/* two pages read in turns: each run is cut by the other's */
	for (uint64_t k = 0; k < 8; k++) {
		m[n++] = (struct packed_obj){ page + 7 * 8192 + 32 * k, 32, 2000 + 100 * k };
		m[n++] = (struct packed_obj){ page + 8 * 8192 + 32 * k, 32, 2050 + 100 * k };
	}
	/* 16 MiB and more, and more than 4 GiB: alone in their first page */
	m[n++] = (struct packed_obj){ page + 16 * 8192, UINT64_C(16) << 20, 3000 };
	m[n++] = (struct packed_obj){ page + 16 * 8192 + (UINT64_C(16) << 20),
				      (UINT64_C(4) << 30) + 8192, gib4 };
	/* 2 KiB objects: a block of 64 over 32 pages, one page whole among them */
	for (uint64_t k = 0; k < 200; k++) {
		uint64_t at = HEAP_START + (UINT64_C(8) << 30) + 2048 * k;

		m[n++] = (struct packed_obj){ at, k == 101 ? 1024 : 2048, 4000 + 2100 * k };
	}
	for (int planned = 0; planned < 2; planned++) { /* check_packed() sorts: a copy */
		memcpy(w, m, n * sizeof(*m));
		index_packed(&idx, w, n, planned);
		check_packed(&idx, w, n);
		assert_true(idx.nwhole > 0); /* the fallbacks were taken */
		heap_index_release(&idx);
	}
	free(m);
	free(w);
}

/*
 * Two indexes of one file's halves, merged: a page cut between them (its objects in
 * both), a page only the second has objects starting in but the first covers with a
 * large object, pages only in one. The result reads back as one index of it all.
 */
static void test_absorb_packing(void **state)
{
	const uint64_t page = HEAP_START + 8192 * 64;
	struct packed_obj m[600], w[600];
	struct heap_index a, b;
	struct hr_error err = { 0 };
	size_t n = 0, half;

	m[n++] = (struct packed_obj){ page + 4 * 8192, 8192 + 4096, 20000 }; /* into page 5 */
	for (uint64_t k = 0; k < 100; k++)
		m[n++] = (struct packed_obj){ page + 32 * k, 32, 100 + 50 * k };
	half = n - 40; /* page 0 is cut after 60 objects */
	m[n++] = (struct packed_obj){ page + 5 * 8192 + 4096, 64, 40000 };
	for (uint64_t k = 0; k < 300; k++)
		m[n++] = (struct packed_obj){ page + 9 * 8192 + 16 * k, 16, 50000 + 30 * k };
	for (int planned = 0; planned < 2; planned++) { /* both tables hashed, or both direct */
		assert_int_equal(heap_index_init(&a, 8), HR_OK);
		assert_int_equal(heap_index_init(&b, 8), HR_OK);
		if (planned) {
			plan_pages(&a, m, n);
			plan_pages(&b, m, n);
		}
		for (size_t i = 0; i < n; i++)
			assert_int_equal(heap_index_add(i < half ? &a : &b, m[i].addr, m[i].size, at(m[i].off)),
					 HR_OK);
		assert_int_equal(heap_index_absorb(&a, &b), HR_OK);
		assert_int_equal(heap_index_finish(&a, "t", NULL, 0, &err), HR_OK);
		memcpy(w, m, n * sizeof(*m)); /* check_packed() sorts */
		check_packed(&a, w, n);
		assert_int_equal(a.nwhole, 100); /* page 0's, from both */
		assert_true(a.page_direct); /* planned, or laid out so at the end */
		heap_index_release(&a);
	}
}

/*
 * A direct page table only where it is small beside the file: a params record claiming
 * a vast heap range leaves the hash, whose size follows the pages in use; so does a
 * range that is empty, or a plan made after objects came.
 */
static void test_plan_pages_bounded(void **state)
{
	const uint64_t gib = UINT64_C(1) << 30;
	struct heap_index idx;

	assert_int_equal(heap_index_init(&idx, 8), HR_OK);
	heap_index_plan_pages(&idx, HEAP_START, HEAP_START + 1024 * gib, 64 << 20);
	assert_false(idx.page_direct); /* 2^27 pages for a 64 MiB file */
	heap_index_plan_pages(&idx, HEAP_START, HEAP_START, UINT64_MAX);
	assert_false(idx.page_direct);
	assert_int_equal(heap_index_add(&idx, HEAP_START + 64, 16, at(0)), HR_OK);
	heap_index_plan_pages(&idx, HEAP_START, HEAP_START + gib, UINT64_MAX);
	assert_false(idx.page_direct);
	heap_index_release(&idx);

	assert_int_equal(heap_index_init(&idx, 8), HR_OK);
	heap_index_plan_pages(&idx, HEAP_START, HEAP_START + gib, 4 * gib);
	assert_true(idx.page_direct); /* 2^17 pages (4 MiB of table) for a 4 GiB file */
	assert_int_equal(idx.page_slots, (size_t)1 << 17);
	assert_int_equal(heap_index_add(&idx, HEAP_START + gib - 16, 16, at(0)), HR_OK);
	assert_int_equal(heap_index_add(&idx, HEAP_START + gib, 16, at(0)), HR_EINPUT);
	heap_index_release(&idx);
}

/*
 * Pointer-free spans, which pass 1 claims without queueing: an object in a page that
 * holds no pointer word is; one in a page where another object holds one is not said
 * to be, nor one across two pages (one of which holds none), nor an empty span.
 */
static void test_span_pointer_free(void **state)
{
	const uint64_t page = HEAP_START + 8192 * 8;
	struct hr_error err = { 0 };
	struct heap_index idx;

	assert_int_equal(heap_index_init(&idx, 8), HR_OK);
	for (uint64_t k = 0; k < 4; k++) /* page 0: strings */
		assert_int_equal(heap_index_add(&idx, page + 32 * k, 32, at(100 + 40 * k)), HR_OK);
	for (uint64_t k = 0; k < 4; k++) { /* page 1: the second of each pair has a pointer */
		assert_int_equal(heap_index_add(&idx, page + 8192 + 16 * k, 16, at(300 + 24 * k)),
				 HR_OK);
		if (k % 2)
			assert_int_equal(heap_index_set_ptr(&idx, page + 8192 + 16 * k + 8), HR_OK);
	}
	assert_int_equal(heap_index_add(&idx, page + 3 * 8192 - 64, 128, at(500)), HR_OK);
	assert_int_equal(heap_index_finish(&idx, "t", NULL, 0, &err), HR_OK);
	assert_true(heap_index_span_pointer_free(&idx, page + 32, 32));
	assert_false(heap_index_span_pointer_free(&idx, page + 8192, 16)); /* its page has some */
	assert_false(heap_index_span_pointer_free(&idx, page + 8192 + 16, 16));
	assert_false(heap_index_span_pointer_free(&idx, page + 3 * 8192 - 64, 128));
	assert_false(heap_index_span_pointer_free(&idx, page + 32, 0));
	assert_false(heap_index_span_pointer_free(&idx, page + 100 * 8192, 16)); /* no page */
	heap_index_release(&idx);
}

/*
 * The model built by another front end (the core reader) takes a pointer size of 4 or
 * 8 only: the index finds a word by a shift. Any other size is the caller's mistake,
 * one error naming it, and nothing built; a mapping handed over is unmapped (as on
 * every failure of hr_dump_build_begin()). 4 and 8 build (an empty heap).
 */
static void test_build_refuses_pointer_sizes(void **state)
{
	static const uint32_t bad[] = { 0, 1, 2, 3, 5, 6, 7, 12, 16, UINT32_MAX };
	struct hr_dump_params params = { .ptr_size = 8, .heap_start = HEAP_START,
					 .heap_end = HEAP_END };
	struct hr_error err = { 0 };
	struct hr_dump *d;

	(void)state;
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		char want[64];

		params.ptr_size = bad[k];
		err = (struct hr_error){ 0 };
		assert_null(hr_dump_build_begin("t.core", NULL, 0, false, &params, &err));
		assert_int_equal(err.code, HR_EUSAGE);
		snprintf(want, sizeof(want), "t.core: pointer size %u (want 4 or 8)", bad[k]);
		assert_string_equal(err.msg, want);
	}
	long page = sysconf(_SC_PAGESIZE);
	uint8_t *map = mmap(NULL, (size_t)page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	assert_true(map != MAP_FAILED);
	params.ptr_size = 6;
	assert_null(hr_dump_build_begin("t.core", map, (size_t)page, true, &params, &err));
	assert_int_equal(msync(map, (size_t)page, MS_ASYNC), -1); /* no longer mapped */
	assert_int_equal(errno, ENOMEM);
	for (uint32_t size = 4; size <= 8; size += 4) {
		params.ptr_size = size;
		err = (struct hr_error){ 0 };
		d = hr_dump_build_begin("t.core", NULL, 0, false, &params, &err);
		assert_non_null(d);
		assert_int_equal(hr_dump_build_finish(d, &err), HR_OK);
		assert_int_equal(hr_dump_object_count(d), 0);
		hr_dump_free(d);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lookup_matches_brute_force),
		cmocka_unit_test(test_large_objects),
		cmocka_unit_test(test_unordered_field_list),
		cmocka_unit_test(test_grid_lookups),
		cmocka_unit_test(test_overlap_found),
		cmocka_unit_test(test_scan_split),
		cmocka_unit_test(test_place_by_rank),
		cmocka_unit_test(test_place_by_file_order),
		cmocka_unit_test(test_entry_packing),
		cmocka_unit_test(test_absorb_packing),
		cmocka_unit_test(test_plan_pages_bounded),
		cmocka_unit_test(test_span_pointer_free),
		cmocka_unit_test(test_build_refuses_pointer_sizes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
