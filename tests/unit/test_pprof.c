/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_pprof.c - the pprof writer: the profile it writes is gunzipped and decoded with
 * protobuf-c, and every field checked: sample types, default, stacks leaf first, values,
 * locations, functions and strings.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "heapref/writers.h"
#include "pprofread.h"

static void test_profile_round_trip(void **state)
{
	struct hr_chains *t = hr_chains_new(0);
	uint32_t cache = hr_chains_child(t, HR_CHAINS_TOP, "main.cache", 10);
	uint32_t val = hr_chains_child(t, cache, "$mapval. (*main.Entry)", 22);
	uint32_t buf = hr_chains_child(t, val, "buf. ([]uint8)", 14);
	uint32_t lone = hr_chains_child(t, HR_CHAINS_TOP, "main.lone", 9);
	struct hr_error err = { 0 };
	FILE *f = tmpfile();
	size_t len;

	hr_chains_child(t, lone, "unused. (int)", 13); /* no value: no sample */
	hr_chains_charge(t, cache, 1, 4864);
	hr_chains_charge(t, val, 100, 3200);
	hr_chains_charge(t, buf, 100, 102400);
	assert_int_equal(hr_write_pprof(f, t, NULL, &err), 0);

	uint8_t *raw = pr_gunzip(f, &len);
	Perftools__Profiles__Profile *p = perftools__profiles__profile__unpack(NULL, len, raw);

	assert_non_null(p);
	assert_string_equal(pr_str(p, 0), "");
	assert_int_equal(p->n_sample_type, 2);
	assert_string_equal(pr_str(p, p->sample_type[0]->type), "inuse_objects");
	assert_string_equal(pr_str(p, p->sample_type[0]->unit), "count");
	assert_string_equal(pr_str(p, p->sample_type[1]->type), "inuse_space");
	assert_string_equal(pr_str(p, p->sample_type[1]->unit), "bytes");
	assert_string_equal(pr_str(p, p->default_sample_type), "inuse_space");
	assert_int_equal(p->n_location, 5);
	assert_int_equal(p->n_function, 5);
	assert_int_equal(p->n_sample, 3);
	for (size_t i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];

		assert_int_equal(s->n_value, 2);
		assert_string_equal(pr_location_name(p, s->location_id[s->n_location_id - 1]), "main.cache");
		if (s->n_location_id == 3) {
			assert_string_equal(pr_location_name(p, s->location_id[0]), "buf. ([]uint8)");
			assert_string_equal(pr_location_name(p, s->location_id[1]), "$mapval. (*main.Entry)");
			assert_int_equal(s->value[0], 100);
			assert_int_equal(s->value[1], 102400);
		} else if (s->n_location_id == 2) {
			assert_int_equal(s->value[1], 3200);
		} else {
			assert_int_equal(s->n_location_id, 1);
			assert_int_equal(s->value[0], 1);
			assert_int_equal(s->value[1], 4864);
		}
	}
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(raw);
	fclose(f);
	hr_chains_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_profile_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
