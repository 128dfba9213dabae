/* SPDX-License-Identifier: Apache-2.0 */
/* pprofread.c - a written profile read back (pprofread.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <cmocka.h>

#include "pprofread.h"

uint8_t *pr_gunzip(FILE *f, size_t *len)
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

const char *pr_str(const Perftools__Profiles__Profile *p, int64_t i)
{
	assert_true(i >= 0 && (size_t)i < p->n_string_table);
	return p->string_table[i];
}

const char *pr_location_name(const Perftools__Profiles__Profile *p, uint64_t id)
{
	for (size_t i = 0; i < p->n_location; i++) {
		if (p->location[i]->id != id)
			continue;
		assert_int_equal(p->location[i]->n_line, 1);
		for (size_t j = 0; j < p->n_function; j++)
			if (p->function[j]->id == p->location[i]->line[0]->function_id)
				return pr_str(p, p->function[j]->name);
	}
	fail_msg("no location %llu", (unsigned long long)id);
	return NULL;
}

const char *pr_label(const Perftools__Profiles__Profile *p, const Perftools__Profiles__Sample *s,
		     const char *key)
{
	for (size_t i = 0; i < s->n_label; i++)
		if (!strcmp(pr_str(p, s->label[i]->key), key))
			return pr_str(p, s->label[i]->str);
	return NULL;
}
