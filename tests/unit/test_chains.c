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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_children_are_made_once),
		cmocka_unit_test(test_depth_limit_cuts_and_charges_the_last_node),
		cmocka_unit_test(test_many_nodes_and_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
