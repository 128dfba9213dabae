/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_diff.c - the diff of two chain trees as a table: chains matched by name, not by
 * node id; growth cumulative, signed, biggest first; new and gone marks; <self> lines;
 * unchanged chains left out; failures.
 *
 * The expected figures are worked out by hand from the trees built here.
 */
#define _GNU_SOURCE /* open_memstream */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "heapref/writers.h"

static uint32_t child(struct hr_chains *t, uint32_t parent, const char *name)
{
	return hr_chains_child(t, parent, name, strlen(name));
}

/* The diff of old and new, as one string (caller frees). */
static char *diff(const struct hr_chains *old, const struct hr_chains *new, int *rc)
{
	struct hr_error err = { 0 };
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	*rc = hr_write_chain_diff(f, old, new, &err);
	assert_int_equal(fclose(f), 0);
	return text;
}

/* One line of the table as docs/cli.md lays it out: growth, old, new, mark, chain. */
static char *row(char *buf, int64_t gobj, int64_t gbytes, uint64_t old_obj, uint64_t old_bytes,
		 uint64_t new_obj, uint64_t new_bytes, const char *mark, int indent,
		 const char *label)
{
	sprintf(buf, "%+14" PRId64 " %+11" PRId64 " %14" PRIu64 " %14" PRIu64 " %11" PRIu64
		" %11" PRIu64 " %-4s  %*s%s\n", gbytes, gobj, old_bytes, new_bytes, old_obj, new_obj,
		mark, 2 * indent, "", label);
	return buf;
}

/*
 * old: a (1 object, 10 B) with a1 (2, 200); b (1, 50); c (1, 5). 5 objects, 265 B.
 * new, made in another order so that node ids differ: n (1, 30); c (1, 5); a (2, 20)
 * with a2 (1, 40) and a1 (3, 300). 8 objects, 395 B.
 * a grows from 3/210 to 6/360 (+3, +150): its own value by 1/10 (<self>), a1 by 1/100,
 * a2 is new (+1, +40). n is new (+30), b is gone (-50), c is unchanged and not shown.
 */
static void test_growth_by_chain(void **state)
{
	struct hr_chains *old = hr_chains_new(0), *new = hr_chains_new(0);
	uint32_t a;
	char buf[256], *text;
	int rc;

	(void)state;
	a = child(old, HR_CHAINS_TOP, "a");
	hr_chains_charge(old, a, 1, 10);
	hr_chains_charge(old, child(old, a, "a1"), 2, 200);
	hr_chains_charge(old, child(old, HR_CHAINS_TOP, "b"), 1, 50);
	hr_chains_charge(old, child(old, HR_CHAINS_TOP, "c"), 1, 5);
	hr_chains_charge(new, child(new, HR_CHAINS_TOP, "n"), 1, 30);
	hr_chains_charge(new, child(new, HR_CHAINS_TOP, "c"), 1, 5);
	a = child(new, HR_CHAINS_TOP, "a");
	hr_chains_charge(new, a, 2, 20);
	hr_chains_charge(new, child(new, a, "a2"), 1, 40);
	hr_chains_charge(new, child(new, a, "a1"), 3, 300);

	text = diff(old, new, &rc);
	assert_int_equal(rc, 0);
	char expected[2048] = "# heapref diff: reachable bytes 265 -> 395 (+130), objects 5 -> 8 "
			      "(+3); figures are cumulative; 5 chains changed, 1 unchanged "
			      "chains not shown\n";
	strcat(expected, "        +bytes    +objects      old bytes      new bytes    old objs    "
			 "new objs       chain\n");
	strcat(expected, row(buf, 3, 130, 5, 265, 8, 395, "", 0,
			     "(everything reachable from the roots)"));
	strcat(expected, row(buf, 3, 150, 3, 210, 6, 360, "", 1, "a"));
	strcat(expected, row(buf, 1, 100, 2, 200, 3, 300, "", 2, "a1"));
	strcat(expected, row(buf, 1, 40, 0, 0, 1, 40, "new", 2, "a2"));
	strcat(expected, row(buf, 1, 10, 1, 10, 2, 20, "", 2, "<self>"));
	strcat(expected, row(buf, 1, 30, 0, 0, 1, 30, "new", 1, "n"));
	strcat(expected, row(buf, -1, -50, 1, 50, 0, 0, "gone", 1, "b"));
	assert_string_equal(text, expected);
	free(text);
	hr_chains_free(old);
	hr_chains_free(new);
}

/*
 * A chain whose value stayed the same while one below it grew and another shrank by as
 * much is shown (growth 0), so the lines under it account for the change.
 */
static void test_moved_within_a_chain(void **state)
{
	struct hr_chains *old = hr_chains_new(0), *new = hr_chains_new(0);
	uint32_t a;
	char buf[256], *text;
	int rc;

	(void)state;
	a = child(old, HR_CHAINS_TOP, "a");
	hr_chains_charge(old, child(old, a, "x"), 1, 64);
	a = child(new, HR_CHAINS_TOP, "a");
	hr_chains_charge(new, child(new, a, "y"), 1, 64);
	text = diff(old, new, &rc);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(text, row(buf, 0, 0, 1, 64, 1, 64, "", 1, "a")));
	assert_non_null(strstr(text, row(buf, 1, 64, 0, 0, 1, 64, "new", 2, "y")));
	assert_non_null(strstr(text, row(buf, -1, -64, 1, 64, 0, 0, "gone", 2, "x")));
	assert_ptr_equal(strstr(text, "<self>"), NULL);
	free(text);
	hr_chains_free(old);
	hr_chains_free(new);
}

/* The same tree twice: only the top, growing by nothing. */
static void test_no_change(void **state)
{
	struct hr_chains *t = hr_chains_new(0);
	char buf[256], *text;
	int rc;

	(void)state;
	hr_chains_charge(t, child(t, child(t, HR_CHAINS_TOP, "a"), "b"), 2, 32);
	text = diff(t, t, &rc);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(text, "; 0 chains changed, 2 unchanged chains not shown\n"));
	assert_non_null(strstr(text, row(buf, 0, 0, 2, 32, 2, 32, "", 0,
					 "(everything reachable from the roots)")));
	assert_ptr_equal(strstr(text, "roots)\n") + strlen("roots)\n"), text + strlen(text));
	free(text);
	hr_chains_free(t);
}

/* Deeper than 32 levels, a line stays at 32 and says its depth. */
static void test_deep_chain(void **state)
{
	struct hr_chains *old = hr_chains_new(0), *new = hr_chains_new(0);
	uint32_t n = HR_CHAINS_TOP;
	char buf[256], *text;
	int rc;

	(void)state;
	for (int i = 0; i < 40; i++)
		n = child(new, n, "next");
	hr_chains_charge(new, n, 1, 16);
	text = diff(old, new, &rc);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(text, row(buf, 1, 16, 0, 0, 1, 16, "new", 32, "[depth 40] next")));
	free(text);
	hr_chains_free(old);
	hr_chains_free(new);
}

static void test_failed_write(void **state)
{
	struct hr_chains *t = hr_chains_new(0);
	struct hr_error err = { 0 };
	FILE *full = fopen("/dev/full", "w");

	(void)state;
	hr_chains_charge(t, child(t, HR_CHAINS_TOP, "a"), 1, 8);
	if (full) { /* writes to /dev/full fail with ENOSPC */
		setvbuf(full, NULL, _IONBF, 0);
		assert_int_equal(hr_write_chain_diff(full, t, t, &err), HR_EIO);
		assert_non_null(strstr(err.msg, "No space"));
		fclose(full);
	}
	hr_chains_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_growth_by_chain),
		cmocka_unit_test(test_moved_within_a_chain),
		cmocka_unit_test(test_no_change),
		cmocka_unit_test(test_deep_chain),
		cmocka_unit_test(test_failed_write),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
