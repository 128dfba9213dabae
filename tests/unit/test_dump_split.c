/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_dump_split.c - reading a dump's second half with another thread (dump_reader.c)
 * must make exactly what one thread reading the whole file makes: the same objects,
 * pointer bits and record counts, the same first error. Each dump here is read both
 * ways (split_min 0: always split; SIZE_MAX: never) and the two results compared,
 * including when the guessed start of the second half is no record boundary at all;
 * so are steals (the second thread taking on part of the first half), which the tests
 * of split_min 0 may make, and the tests of steals make for sure.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dump_internal.h"
#include "dumpbuf.h"
#include "heapref/dump.h"

#define HEAP_START UINT64_C(0xc000000000)
#define HEAP_END (HEAP_START + (UINT64_C(1) << 32))

/* What a split comes to on this machine if it can: the reader needs two processors. */
static enum dump_split if_two_cpus(enum dump_split outcome)
{
	return hr_cpus_usable() >= 2 ? outcome : DUMP_SPLIT_NONE;
}

static struct hr_dump *open_with(const struct dumpbuf *b, size_t split_min, struct hr_error *err)
{
	return dump_open_bytes_split(b->bytes, b->len, "t.dump", split_min, err);
}

/* Spans of objects of one size, as Go writes them: `spans` of them from page `page`. */
static void add_spans(struct dumpbuf *b, uint64_t page, int spans)
{
	static const uint64_t sizes[] = { 16, 48, 128, 1024, 12288 };

	for (int s = 0; s < spans; s++) {
		uint64_t size = sizes[s % 5], base = HEAP_START + ((page + 2 * (uint64_t)s) << 13);

		for (uint64_t off = 0; off + size <= 16384; off += size) {
			uint64_t ptrs[2] = { 0, size - 8 };

			if ((off / size) % 5 == 3)
				continue; /* a free slot */
			db_object(b, base + off, (size_t)size, (uint8_t)off, ptrs, 2);
		}
	}
}

/* An "other root" record: a description and a pointer. */
static void add_other_root(struct dumpbuf *b, uint64_t ptr)
{
	db_uvarint(b, HR_REC_OTHER_ROOT);
	db_string(b, "root");
	db_uvarint(b, ptr);
}

/* Everything the reader makes of a dump, compared between two readings. */
static void assert_same_dump(const struct hr_dump *a, const struct hr_dump *b)
{
	size_t n = hr_dump_object_count(a);
	uint64_t bits_a[64], bits_b[64];

	assert_int_equal(hr_dump_object_count(b), n);
	assert_int_equal(hr_dump_object_bytes(b), hr_dump_object_bytes(a));
	assert_int_equal(hr_dump_heap_ptr_words(b), hr_dump_heap_ptr_words(a));
	for (unsigned k = 0; k < HR_REC_KIND_COUNT; k++)
		assert_int_equal(hr_dump_record_count(b, k), hr_dump_record_count(a, k));
	for (size_t i = 0; i < n; i++) {
		struct hr_object x = hr_dump_object(a, i), y = hr_dump_object(b, i);

		assert_int_equal(y.addr, x.addr);
		assert_int_equal(y.size, x.size);
		assert_ptr_equal(y.data, x.data);
		if (x.size <= sizeof(bits_a) * 8 * 8) {
			hr_dump_object_ptr_bits(a, i, bits_a);
			hr_dump_object_ptr_bits(b, i, bits_b);
			assert_memory_equal(bits_a, bits_b, hr_bit_words(x.size / 8) * 8);
		}
		assert_int_equal(hr_dump_object_at(b, x.addr + x.size - 1), i);
	}
}

/*
 * Reads b both ways, the second half's start looked for from byte split_at (0: where
 * the reader would); both must succeed alike. Returns what became of the split.
 */
static enum dump_split read_both_ways_at(const struct dumpbuf *b, size_t split_at)
{
	struct hr_error e1 = { 0 }, e2 = { 0 };
	struct hr_dump *one = open_with(b, SIZE_MAX, &e1);
	struct hr_dump *two = split_at ? dump_open_bytes_split_at(b->bytes, b->len, "t.dump",
								split_at, &e2)
				       : open_with(b, 0, &e2);
	enum dump_split split;

	if (!one)
		fail_msg("one thread: %s", e1.msg);
	if (!two)
		fail_msg("two threads: %s", e2.msg);
	assert_int_equal(dump_split_outcome(one), DUMP_SPLIT_NONE);
	split = dump_split_outcome(two);
	assert_same_dump(one, two);
	hr_dump_free(one);
	hr_dump_free(two);
	return split;
}

static enum dump_split read_both_ways(const struct dumpbuf *b)
{
	return read_both_ways_at(b, 0);
}

/* Reads b with one thread and as plan says; both must fail with the same error line. */
static void assert_same_error_planned(const struct dumpbuf *b,
				      const struct dump_split_plan *plan, const char *expect)
{
	struct hr_error e1 = { 0 }, e2 = { 0 };

	assert_null(open_with(b, SIZE_MAX, &e1));
	assert_null(dump_open_bytes_planned(b->bytes, b->len, "t.dump", plan, &e2));
	assert_int_equal(e2.code, e1.code);
	assert_string_equal(e2.msg, e1.msg);
	if (!strstr(e1.msg, expect))
		fail_msg("\"%s\" does not say \"%s\"", e1.msg, expect);
}

/* Reads b both ways (split_min 0: always split); the same error line. */
static void assert_same_error(const struct dumpbuf *b, const char *expect)
{
	assert_same_error_planned(b, &(struct dump_split_plan){ 0 }, expect);
}

/* A heap of spans, some cut by the middle of the file: read in halves, the same index. */
static void test_split_same_index(void **state)
{
	struct dumpbuf b = { 0 };

	db_header(&b);
	db_params(&b, HEAP_START, HEAP_END);
	add_spans(&b, 0, 40);
	add_other_root(&b, HEAP_START + 16);
	db_eof(&b);
	assert_int_equal(read_both_ways(&b), if_two_cpus(DUMP_SPLIT_KEPT));
	dumpbuf_release(&b);
}

/* Objects after a record of another kind: the second thread stops there, this one
 * reads the rest, objects included. */
static void test_split_objects_after_other_records(void **state)
{
	struct dumpbuf b = { 0 };

	db_header(&b);
	db_params(&b, HEAP_START, HEAP_END);
	add_spans(&b, 0, 30);
	add_other_root(&b, HEAP_START);
	add_spans(&b, 200, 10);
	add_other_root(&b, HEAP_START + 8);
	add_spans(&b, 400, 5);
	db_eof(&b);
	assert_int_equal(read_both_ways(&b), if_two_cpus(DUMP_SPLIT_KEPT));
	dumpbuf_release(&b);
}

/*
 * The halves are of equal estimated cost, not of equal bytes: a quarter of the bytes
 * after the params record in 16-byte objects with pointers (many records and fields
 * per byte), the rest in a few objects of 32 KiB without any. The second half starts
 * within the small objects, and the result is the same.
 */
static void test_split_balances_cost(void **state)
{
	struct dumpbuf b = { 0 };
	struct hr_error err = { 0 };
	struct hr_dump *d;
	size_t params_end, small_end;
	uint64_t at = HEAP_START;

	(void)state;
	db_header(&b);
	db_params(&b, HEAP_START, HEAP_END);
	params_end = b.len;
	for (int k = 0; k < 8192; k++, at += 16) {
		uint64_t ptr = 0;

		db_object(&b, at, 16, (uint8_t)k, &ptr, 1);
	}
	small_end = b.len;
	at = HEAP_START + (UINT64_C(1) << 24);
	while (b.len - params_end < 4 * (small_end - params_end))
		db_object(&b, at, 32768, 0, NULL, 0), at += 32768;
	db_eof(&b);
	assert_int_equal(read_both_ways(&b), if_two_cpus(DUMP_SPLIT_KEPT));
	if (hr_cpus_usable() >= 2) {
		assert_non_null(d = open_with(&b, 0, &err));
		assert_in_range(dump_split_start(d), params_end + 1, small_end - 1);
		hr_dump_free(d);
	}
	dumpbuf_release(&b);
}

#define DECOY_RECORDS 60

/*
 * An object whose contents read as DECOY_RECORDS object records (more than
 * SPLIT_SYNC_RECORDS), each of the same length; returns where the last
 * SPLIT_SYNC_RECORDS of them start in b.
 */
static size_t add_decoy(struct dumpbuf *b, uint64_t addr)
{
	struct dumpbuf fake = { 0 };
	size_t contents;

	for (int i = 0; i < DECOY_RECORDS; i++)
		db_object(&fake, HEAP_START + (UINT64_C(1) << 30) + 8 * (uint64_t)i, 8, 0, NULL, 0);
	db_uvarint(b, HR_REC_OBJECT);
	db_uvarint(b, addr);
	db_mem(b, fake.bytes, fake.len);
	contents = b->len - fake.len + fake.len / DECOY_RECORDS * (DECOY_RECORDS - 16);
	db_fields(b, NULL, 0);
	dumpbuf_release(&fake);
	return contents;
}

/*
 * The middle of the file falls inside an object whose contents look like object
 * records: the second thread starts at no record boundary. This thread must notice
 * (it steps over that place) and read on alone, to the same result.
 */
static void test_split_wrong_guess_dropped(void **state)
{
	bool tried = false;

	for (size_t pad = 8; pad < 131072 && !tried; pad += 256) { /* moves the middle */
		struct dumpbuf b = { 0 };
		size_t params_end, decoy, last_chain, mid;

		db_header(&b);
		db_params(&b, HEAP_START, HEAP_END);
		params_end = b.len;
		add_spans(&b, 0, 12);
		decoy = b.len;
		last_chain = add_decoy(&b, HEAP_START + (UINT64_C(1) << 31));
		add_spans(&b, 1000, 8);
		db_object(&b, HEAP_START + (UINT64_C(1) << 31) + 65536, pad, 0, NULL, 0);
		db_eof(&b);
		mid = params_end + (b.len - params_end) / 2;
		if (mid > decoy && mid <= last_chain) { /* the first chain from mid is fake */
			tried = true;
			assert_int_equal(read_both_ways_at(&b, mid), if_two_cpus(DUMP_SPLIT_DROPPED));
		}
		dumpbuf_release(&b);
	}
	assert_true(tried);
}

/* A bad object in the second half, or in the first: the same first error either way. */
static void test_split_same_errors(void **state)
{
	uint64_t outside = 4096;

	for (int where = 0; where < 2; where++) {
		struct dumpbuf b = { 0 };

		db_header(&b);
		db_params(&b, HEAP_START, HEAP_END);
		add_spans(&b, 0, 20);
		if (where == 0) /* in the first third */
			db_object(&b, HEAP_START + (UINT64_C(1) << 30), 16, 0, &outside, 1);
		add_spans(&b, 100, 20);
		add_spans(&b, 200, 20);
		if (where == 1) /* in the last third */
			db_object(&b, HEAP_START + (UINT64_C(1) << 30), 16, 0, &outside, 1);
		db_eof(&b);
		assert_same_error(&b, "lies outside the object");
		dumpbuf_release(&b);
	}
}

/* ------------------------------------------------------------------------------ */
/* Steals: the second thread, done first, takes on part of what the first has left  */

/*
 * Ends b with the EOF record and reads it with one thread and as plan says (the first
 * thread waiting for the steal to be decided); both must succeed alike, the steal and
 * the split come to what the test says, and b is released.
 */
/*
 * What --stats says of the reading (hr_dump_reading()) agrees with what happened: one
 * read by one thread; two's second thread from the start found, kept or not, and its
 * steal, if taken, from before that start: from the plan's, which tests put at a
 * record's start.
 */
static void assert_reading(const struct hr_dump *one, const struct hr_dump *two,
			   const struct dump_split_plan *plan)
{
	struct hr_dump_reading r1 = hr_dump_reading(one), r2 = hr_dump_reading(two);
	bool stolen = dump_steal_outcome(two) == DUMP_SPLIT_KEPT;

	assert_true(!r1.second_at && !r1.second_kept && !r1.steal_at);
	assert_int_equal(r2.second_at, dump_split_start(two));
	assert_int_equal(r2.second_kept, dump_split_outcome(two) == DUMP_SPLIT_KEPT);
	assert_int_equal(r2.steal_at != 0, stolen);
	if (stolen) {
		assert_true(r2.steal_at < r2.second_at);
		if (plan->steal_at)
			assert_int_equal(r2.steal_at, plan->steal_at);
	}
}

static void check_planned(struct dumpbuf *b, struct dump_split_plan plan,
			  enum dump_split steal, enum dump_split split)
{
	struct hr_error e1 = { 0 }, e2 = { 0 };
	struct hr_dump *one, *two;

	db_eof(b);
	one = open_with(b, SIZE_MAX, &e1);
	plan.steal_wait = true;
	two = dump_open_bytes_planned(b->bytes, b->len, "t.dump", &plan, &e2);
	if (!one)
		fail_msg("one thread: %s", e1.msg);
	if (!two)
		fail_msg("two threads: %s", e2.msg);
	assert_int_equal(dump_steal_outcome(two), if_two_cpus(steal));
	assert_int_equal(dump_split_outcome(two), if_two_cpus(split));
	assert_reading(one, two, &plan);
	assert_same_dump(one, two);
	hr_dump_free(one);
	hr_dump_free(two);
	dumpbuf_release(b);
}

/* b with its header and params record, then 12 spans from page 0. */
static void steal_dump_begin(struct dumpbuf *b)
{
	db_header(b);
	db_params(b, HEAP_START, HEAP_END);
	add_spans(b, 0, 12);
}

/* add_spans() at the end of b; returns the offset in b where those spans start. */
static size_t spans_from(struct dumpbuf *b, uint64_t page, int spans)
{
	size_t at = b->len;

	add_spans(b, page, spans);
	return at;
}

/*
 * The second half is a few spans at the end: the second thread is done while the
 * first has nearly all the file left, and takes on the second half of that. The
 * first thread ends a record where the stolen part starts, takes it, then the second
 * half: the same index.
 */
static void test_steal_taken(void **state)
{
	struct dumpbuf b = { 0 };
	struct dump_split_plan plan = { 0 };

	(void)state;
	steal_dump_begin(&b);
	add_spans(&b, 100, 48);
	plan.split_at = spans_from(&b, 200, 4);
	check_planned(&b, plan, DUMP_SPLIT_KEPT, DUMP_SPLIT_KEPT);
}

/*
 * The stolen part's start falls inside an object whose contents look like object
 * records: the first thread steps over it, drops the stolen part and reads on to the
 * second half, which it takes.
 */
static void test_steal_wrong_guess_dropped(void **state)
{
	struct dumpbuf b = { 0 };
	struct dump_split_plan plan = { 0 };

	(void)state;
	steal_dump_begin(&b);
	plan.steal_at = add_decoy(&b, HEAP_START + (UINT64_C(1) << 31));
	add_spans(&b, 1000, 8);
	plan.split_at = spans_from(&b, 1200, 4);
	check_planned(&b, plan, DUMP_SPLIT_DROPPED, DUMP_SPLIT_KEPT);
}

/*
 * The second half's start is the wrong guess, inside a decoy, and the stolen part
 * starts before it: reading on from a true boundary, the stolen part steps over the
 * second half's start. The first thread takes the stolen part and drops the second
 * half, then reads on alone from where the stolen part stopped.
 */
static void test_steal_steps_over_second_half(void **state)
{
	struct dumpbuf b = { 0 };
	struct dump_split_plan plan = { 0 };

	(void)state;
	steal_dump_begin(&b);
	plan.steal_at = spans_from(&b, 100, 8);
	plan.split_at = add_decoy(&b, HEAP_START + (UINT64_C(1) << 31));
	add_spans(&b, 1000, 4);
	check_planned(&b, plan, DUMP_SPLIT_KEPT, DUMP_SPLIT_DROPPED);
}

/*
 * A record of another kind in the stolen part: it stops there, and the first thread,
 * having taken it, reads that record and on to the second half.
 */
static void test_steal_stops_at_other_record(void **state)
{
	struct dumpbuf b = { 0 };
	struct dump_split_plan plan = { 0 };

	(void)state;
	steal_dump_begin(&b);
	plan.steal_at = spans_from(&b, 100, 8);
	add_other_root(&b, HEAP_START + 8);
	add_spans(&b, 300, 8);
	plan.split_at = spans_from(&b, 1000, 4);
	check_planned(&b, plan, DUMP_SPLIT_KEPT, DUMP_SPLIT_KEPT);
}

/* A bad object in the stolen part: the same first error as one thread's. */
static void test_steal_same_error(void **state)
{
	uint64_t outside = 4096;
	struct dumpbuf b = { 0 };
	struct dump_split_plan plan = { .steal_wait = true };

	(void)state;
	steal_dump_begin(&b);
	plan.steal_at = spans_from(&b, 100, 8);
	db_object(&b, HEAP_START + (UINT64_C(1) << 30), 16, 0, &outside, 1);
	add_spans(&b, 300, 8);
	plan.split_at = spans_from(&b, 1000, 4);
	db_eof(&b);
	assert_same_error_planned(&b, &plan, "lies outside the object");
	dumpbuf_release(&b);
}

/* A dump cut short inside the second half: the same "no EOF record" count. */
static void test_split_truncated(void **state)
{
	struct dumpbuf b = { 0 };

	db_header(&b);
	db_params(&b, HEAP_START, HEAP_END);
	add_spans(&b, 0, 40);
	assert_same_error(&b, "no EOF record");
	b.len -= 3; /* and inside a record */
	assert_same_error(&b, "truncated object record");
	dumpbuf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split_same_index),
		cmocka_unit_test(test_split_objects_after_other_records),
		cmocka_unit_test(test_split_wrong_guess_dropped),
		cmocka_unit_test(test_split_balances_cost),
		cmocka_unit_test(test_split_same_errors),
		cmocka_unit_test(test_split_truncated),
		cmocka_unit_test(test_steal_taken),
		cmocka_unit_test(test_steal_wrong_guess_dropped),
		cmocka_unit_test(test_steal_steps_over_second_half),
		cmocka_unit_test(test_steal_stops_at_other_record),
		cmocka_unit_test(test_steal_same_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
