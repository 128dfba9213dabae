/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_report.c - the condensed text report of a chain tree: cumulative values, the
 * cutoff merging small chains into <other>, <self> lines, order, deep chains, failures.
 *
 * The expected texts are worked out by hand from the trees built here.
 */
#define _GNU_SOURCE /* open_memstream */
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

/* The report of tree at cutoff, as one string (caller frees). */
static char *report(const struct hr_chains *t, double cutoff, int *rc)
{
	struct hr_error err = { 0 };
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	*rc = hr_write_chain_report(f, t, cutoff, &err);
	assert_int_equal(fclose(f), 0);
	return text;
}

/*
 *  top
 *   a  own 1 object, 100 B;  children a1 (2, 500), a2 (1, 5), a3 (1, 3)
 *   b  own nothing;          child b1 (1, 300), and `empty`, made but charged nothing
 *   c  own 1 object, 2 B
 * All: 7 objects, 910 B. At 1%, 9.1 B: a (608 B), a1, b (300 B), b1 are shown; a2 and
 * a3 merge into a's <other>; c into the top's <other>; a's own 100 B gets <self>.
 * Shares: 608/910 = 66.81%, 500/910 = 54.95%, 100/910 = 10.99%, 8/910 = 0.88%,
 * 300/910 = 32.97%, 2/910 = 0.22%.
 */
static struct hr_chains *small_tree(void)
{
	struct hr_chains *t = hr_chains_new(0);
	uint32_t a = child(t, HR_CHAINS_TOP, "a");
	uint32_t b = child(t, HR_CHAINS_TOP, "b");

	hr_chains_charge(t, child(t, HR_CHAINS_TOP, "c"), 1, 2);
	hr_chains_charge(t, a, 1, 100);
	hr_chains_charge(t, child(t, a, "a3"), 1, 3); /* made first: order is by size */
	hr_chains_charge(t, child(t, a, "a1"), 2, 500);
	hr_chains_charge(t, child(t, a, "a2"), 1, 5);
	hr_chains_charge(t, child(t, b, "b1"), 1, 300);
	child(t, b, "empty");
	return t;
}

static const char header_1pct[] =
	"# heapref: 910 bytes in 7 objects reachable; bytes and objects are cumulative; "
	"chains under 1% of the bytes are merged into <other>\n"
	"         bytes   share      objects  chain\n";

static void test_cutoff_merges_small_chains(void **state)
{
	struct hr_chains *t = small_tree();
	int rc;
	char *text = report(t, 1.0, &rc);
	char expected[2048];

	snprintf(expected, sizeof(expected), "%s%s", header_1pct,
		 "           910 100.00%            7  (everything reachable from the roots)\n"
		 "           608  66.81%            5    a\n"
		 "           500  54.95%            2      a1\n"
		 "           100  10.99%            1      <self>\n"
		 "             8   0.88%            2      <other> (2 smaller chains)\n"
		 "           300  32.97%            1    b\n"
		 "           300  32.97%            1      b1\n"
		 "             2   0.22%            1    <other> (1 smaller chain)\n");
	assert_int_equal(rc, 0);
	assert_string_equal(text, expected);
	free(text);
	hr_chains_free(t);
}

/* At 0% every chain that holds something is shown; a node's own value has a <self> line when it has children. */
static void test_cutoff_zero_shows_every_chain(void **state)
{
	struct hr_chains *t = small_tree();
	int rc;
	char *text = report(t, 0.0, &rc);

	assert_int_equal(rc, 0);
	assert_non_null(strstr(text, "      a1\n"));
	assert_non_null(strstr(text, "             5   0.55%            1      a2\n"));
	assert_non_null(strstr(text, "             3   0.33%            1      a3\n"));
	assert_non_null(strstr(text, "             2   0.22%            1    c\n"));
	assert_null(strstr(text, "  <other> ("));
	assert_null(strstr(text, "empty")); /* holds nothing: no line, as in pprof */
	/* a has children and an own value: <self> after a3, the smallest */
	assert_non_null(strstr(text, "a3\n           100  10.99%            1      <self>\n"));
	free(text);
	hr_chains_free(t);
}

/* When the own value is small and children are merged, <other> takes both. */
static void test_small_own_value_goes_to_other(void **state)
{
	struct hr_chains *t = hr_chains_new(0);
	uint32_t r = child(t, HR_CHAINS_TOP, "r");
	int rc;
	char *text;

	hr_chains_charge(t, r, 1, 1);
	hr_chains_charge(t, child(t, r, "big"), 1, 1000);
	hr_chains_charge(t, child(t, r, "tiny"), 1, 2);
	/* 1003 B; 50% is 501.5 B: only big is shown below r, r's own 1 B joins tiny's 2 */
	text = report(t, 50.0, &rc);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(text, "             3   0.30%            2      <other> "
				     "(own value and 1 smaller chain)\n"));
	assert_null(strstr(text, "<self>"));
	free(text);
	hr_chains_free(t);
}

/* A chain deeper than the indentation shows its depth; nothing recurses on depth. */
static void test_deep_chain(void **state)
{
	struct hr_chains *t = hr_chains_new(0);
	uint32_t n = HR_CHAINS_TOP;
	char line[256];
	int rc;
	char *text;

	for (int i = 0; i < 100000; i++) {
		n = child(t, n, "next. (*main.Node)");
		hr_chains_charge(t, n, 1, 16);
	}
	text = report(t, 0.0, &rc);
	assert_int_equal(rc, 0);
	/* depth 32 is the last indented one (64 spaces), holding 100000 - 31 nodes */
	snprintf(line, sizeof(line), "\n       1599504  99.97%%        99969  %64snext. (*main.Node)\n", "");
	assert_non_null(strstr(text, line));
	snprintf(line, sizeof(line), "\n       1599488  99.97%%        99968  %64s[depth 33] next. "
		 "(*main.Node)\n", "");
	assert_non_null(strstr(text, line));
	snprintf(line, sizeof(line), "\n            16   0.00%%            1  %64s[depth 100000] "
		 "next. (*main.Node)\n", "");
	assert_non_null(strstr(text, line));
	free(text);
	hr_chains_free(t);
}

static void test_bad_cutoff_and_failed_write(void **state)
{
	struct hr_chains *t = small_tree();
	struct hr_error err = { 0 };
	FILE *full = fopen("/dev/full", "w");

	assert_int_equal(hr_write_chain_report(stdout, t, 101.0, &err), HR_EUSAGE);
	assert_int_equal(hr_write_chain_report(stdout, t, -1.0, &err), HR_EUSAGE);
	if (full) { /* writes to /dev/full fail with ENOSPC when flushed */
		struct hr_error werr = { 0 };

		setvbuf(full, NULL, _IONBF, 0);
		assert_int_equal(hr_write_chain_report(full, t, 1.0, &werr), HR_EIO);
		assert_non_null(strstr(werr.msg, "No space"));
		fclose(full);
	}
	hr_chains_free(t);
}

/* Only the top: an empty tree reports 0 bytes, 100% of nothing. */
static void test_empty_tree(void **state)
{
	struct hr_chains *t = hr_chains_new(0);
	int rc;
	char *text = report(t, 1.0, &rc);

	assert_int_equal(rc, 0);
	assert_non_null(strstr(text, "\n             0 100.00%            0  "
				     "(everything reachable from the roots)\n"));
	free(text);
	hr_chains_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cutoff_merges_small_chains),
		cmocka_unit_test(test_cutoff_zero_shows_every_chain),
		cmocka_unit_test(test_small_own_value_goes_to_other),
		cmocka_unit_test(test_deep_chain),
		cmocka_unit_test(test_bad_cutoff_and_failed_write),
		cmocka_unit_test(test_empty_tree),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
