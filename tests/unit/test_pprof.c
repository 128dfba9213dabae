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
#include <zlib.h>
#include <cmocka.h>

#include "heapref/writers.h"
#include "profile.pb-c.h"

static uint8_t *gunzip_file(FILE *f, size_t *len)
{
	size_t cap = 1 << 16, in_len;
	uint8_t *in = malloc(1 << 20), *out = malloc(cap);
	z_stream zs = { 0 };

	assert_non_null(in);
	assert_non_null(out);
	rewind(f);
	in_len = fread(in, 1, 1 << 20, f);
	assert_int_equal(in[0], 0x1f); /* gzip magic */
	assert_int_equal(in[1], 0x8b);
	assert_int_equal(inflateInit2(&zs, 15 + 16), Z_OK);
	zs.next_in = in;
	zs.avail_in = (uInt)in_len;
	for (;;) {
		zs.next_out = out + zs.total_out;
		zs.avail_out = (uInt)(cap - zs.total_out);
		int rc = inflate(&zs, Z_NO_FLUSH);

		if (rc == Z_STREAM_END)
			break;
		assert_int_equal(rc, Z_OK);
		cap *= 2;
		out = realloc(out, cap);
	}
	*len = zs.total_out;
	inflateEnd(&zs);
	free(in);
	return out;
}

static const char *str(const Perftools__Profiles__Profile *p, int64_t i)
{
	assert_true(i >= 0 && (size_t)i < p->n_string_table);
	return p->string_table[i];
}

/* The name of the function of location id. */
static const char *location_name(const Perftools__Profiles__Profile *p, uint64_t id)
{
	for (size_t i = 0; i < p->n_location; i++) {
		if (p->location[i]->id != id)
			continue;
		assert_int_equal(p->location[i]->n_line, 1);
		for (size_t j = 0; j < p->n_function; j++)
			if (p->function[j]->id == p->location[i]->line[0]->function_id)
				return str(p, p->function[j]->name);
	}
	fail_msg("no location %llu", (unsigned long long)id);
	return NULL;
}

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

	uint8_t *raw = gunzip_file(f, &len);
	Perftools__Profiles__Profile *p = perftools__profiles__profile__unpack(NULL, len, raw);

	assert_non_null(p);
	assert_string_equal(str(p, 0), "");
	assert_int_equal(p->n_sample_type, 2);
	assert_string_equal(str(p, p->sample_type[0]->type), "inuse_objects");
	assert_string_equal(str(p, p->sample_type[0]->unit), "count");
	assert_string_equal(str(p, p->sample_type[1]->type), "inuse_space");
	assert_string_equal(str(p, p->sample_type[1]->unit), "bytes");
	assert_string_equal(str(p, p->default_sample_type), "inuse_space");
	assert_int_equal(p->n_location, 5);
	assert_int_equal(p->n_function, 5);
	assert_int_equal(p->n_sample, 3);
	for (size_t i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];

		assert_int_equal(s->n_value, 2);
		assert_string_equal(location_name(p, s->location_id[s->n_location_id - 1]), "main.cache");
		if (s->n_location_id == 3) {
			assert_string_equal(location_name(p, s->location_id[0]), "buf. ([]uint8)");
			assert_string_equal(location_name(p, s->location_id[1]), "$mapval. (*main.Entry)");
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
