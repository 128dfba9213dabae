/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_work_queue.c - pass 1's queue (work_queue.c): first in, first out, every field of
 * an item as pushed (streamed or not), and runs: objects of consecutive indexes with one
 * view share an item, which grows while it is being taken from and still gives them
 * back one by one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "scan_internal.h"

static struct work item(uint32_t obj, uint32_t node)
{
	return (struct work){ .obj = obj, .node = node, .type = 7, .aux = 0, .mode = M_VALUE,
			      .goroutine = 1 };
}

static void push(struct work_queue *q, struct work w)
{
	assert_int_equal(queue_push(q, &w), HR_OK);
}

static void expect(struct work_queue *q, struct work want)
{
	struct work got;

	assert_true(queue_take(q, &got));
	assert_memory_equal(&got, &want, sizeof(got));
}

/* Runs break where the view, the index, an offset or a count breaks them. */
static void test_fifo_with_runs(void **state)
{
	struct work_queue q = { 0 };
	struct work with_offset = item(13, 5), with_count = item(14, 5), fill = item(15, 5);
	struct work got;

	(void)state;
	with_offset.offset = 16;
	with_count.count = 3;
	fill.count = COUNT_FILL;
	for (uint32_t i = 10; i < 13; i++)
		push(&q, item(i, 5));     /* a run 10-12 */
	push(&q, with_offset);            /* 13: an offset, never in a run */
	push(&q, with_count);             /* 14: an explicit count, never in a run */
	push(&q, fill);                   /* 15: COUNT_FILL is part of the view */
	push(&q, item(16, 5));            /* another view than 15's: a new item */
	push(&q, item(17, 6));            /* another node */
	push(&q, item(19, 6));            /* not 18 */
	push(&q, item(20, 6));            /* 19-20 */
	assert_int_equal(queue_length(&q), 10);
	for (uint32_t i = 10; i < 13; i++)
		expect(&q, item(i, 5));
	expect(&q, with_offset);
	expect(&q, with_count);
	expect(&q, fill);
	expect(&q, item(16, 5));
	expect(&q, item(17, 6));
	expect(&q, item(19, 6));
	expect(&q, item(20, 6));
	assert_false(queue_take(&q, &got));
	assert_int_equal(queue_length(&q), 0);
	queue_release(&q);
}

/* A run taken from while it grows: every object once, in order. */
static struct work streamed(uint32_t obj, uint32_t node)
{
	struct work w = item(obj, node);

	w.streamed = 1;
	return w;
}

/* A streamed item comes back streamed; runs of one view break where that changes. */
static void test_streamed_items(void **state)
{
	struct work_queue q = { 0 };

	(void)state;
	push(&q, item(30, 5));
	push(&q, streamed(31, 5));    /* consecutive, same view: a new item all the same */
	push(&q, streamed(32, 5));    /* a streamed run 31-32 */
	push(&q, item(33, 5));        /* not part of it */
	push(&q, item(34, 5));
	assert_int_equal(queue_length(&q), 5);
	expect(&q, item(30, 5));
	expect(&q, streamed(31, 5));
	expect(&q, streamed(32, 5));
	expect(&q, item(33, 5));
	expect(&q, item(34, 5));
	assert_int_equal(queue_length(&q), 0);
	queue_release(&q);
}

static void test_run_taken_while_it_grows(void **state)
{
	struct work_queue q = { 0 };
	uint32_t next_in = 100, next_out = 100;

	(void)state;
	for (int round = 0; round < 50; round++) {
		for (int k = 0; k < 3; k++)
			push(&q, item(next_in++, 9));
		for (int k = 0; k < 2; k++)
			expect(&q, item(next_out++, 9));
	}
	while (next_out < next_in)
		expect(&q, item(next_out++, 9));
	assert_int_equal(queue_length(&q), 0);
	push(&q, item(next_in, 9)); /* an empty queue starts over: no run to join */
	expect(&q, item(next_in, 9));
	queue_release(&q);
}

/* A million consecutive objects are one item: one chunk, not 8 MB of items. */
static void test_million_in_one_item(void **state)
{
	struct work_queue q = { 0 };

	(void)state;
	for (uint32_t i = 1; i <= 1000000; i++)
		push(&q, item(i, 3));
	assert_int_equal(queue_length(&q), 1000000);
	assert_ptr_equal(q.head, q.tail); /* one chunk */
	for (uint32_t i = 1; i <= 1000000; i++)
		expect(&q, item(i, 3));
	queue_release(&q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fifo_with_runs),
		cmocka_unit_test(test_run_taken_while_it_grows),
		cmocka_unit_test(test_streamed_items),
		cmocka_unit_test(test_million_in_one_item),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
