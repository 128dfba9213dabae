/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_scan_writers.c - the writers on the chain tree of a real scan: a hand-made heap
 * (heapmodel.h) and a binary made by hand (binary_fixture.h, gotypes.h) scanned through
 * the public APIs, then written as the text report (hr_write_chain_report()), every
 * line checked, and as a pprof profile (hr_write_pprof()), read back and every sample's
 * stack, values and root label checked.
 *
 * The heap (Go's size classes), with what each chain holds worked out by hand:
 *   main.pool []*main.Buf -> A, 4 pointers (32 B) -> B0..B3, main.Buf{data []uint8}
 *                            (24 B each); data: B0 512 B, B1 256 B, B2 48 B, B3 nil
 *   main.last *main.Buf   -> B4 (24 B) -> 8 B
 * 10 objects, 976 bytes.
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

#include "gotypes.h"
#include "heapmodel.h"
#include "heapref/writers.h"
#include "pprofread.h"

#define DATA UINT64_C(0x500000)
#define H HM_HEAP

static struct hr_binary *pool_heap(struct heapmodel *m)
{
	static const uint64_t data[5] = { 512, 256, 48, 0, 8 };
	static const uint64_t data_at[5] = { H + 0x1000, H + 0x1200, H + 0x1300, 0, H + 0x1340 };
	struct go_types g;
	struct hr_error err = { 0 };
	struct hr_binary *bin;
	uint32_t buf, buf_ptr;

	gt_init(&g, "go1.26.8");
	buf = gt_struct(&g, "main.Buf", 24, 0);
	binary_fixture_member(g.fx, buf, "data", 0, g.bytes);
	buf_ptr = gt_ptr(&g, "*main.Buf", buf, 0);
	binary_fixture_global(g.fx, "main.pool", DATA,
			      gt_slice(&g, "[]*main.Buf", buf_ptr, gt_ptr(&g, "**main.Buf", buf_ptr, 0)));
	binary_fixture_global(g.fx, "main.last", DATA + 24, buf_ptr);
	bin = binary_fixture_finish(g.fx, &err);
	if (!bin)
		fail_msg("binary_fixture_finish: %s", err.msg);

	hm_init(m, "go1.26.8");
	hm_segment(m, HM_DATA, DATA, 32);
	hm_ptr(m, DATA, H);
	hm_word(m, DATA + 8, 4);
	hm_word(m, DATA + 16, 4);
	hm_ptr(m, DATA + 24, H + 0x100 + 4 * 0x18);
	hm_object(m, H, 32);
	for (uint64_t i = 0; i < 5; i++) {
		uint64_t b = H + 0x100 + i * 0x18;

		if (i < 4)
			hm_ptr(m, H + 8 * i, b);
		hm_object(m, b, 24);
		hm_ptr(m, b, data_at[i]);
		hm_word(m, b + 8, data[i]);
		hm_word(m, b + 16, data[i]);
		if (data[i])
			hm_object(m, data_at[i], data[i]);
	}
	return bin;
}

/*
 * At a 5% cutoff (48.8 of 976 bytes): main.last (32 B) is merged into the top's
 * <other>; below main.pool, [3] (24 B) and main.pool's own 32 B into its <other>; [2]
 * (72 B) is shown but its data (48 B) is not, so nothing is shown below it; [0] and [1]
 * show their data and, nothing being merged there, their own 24 B as <self>.
 */
static void test_report_of_a_scan(void **state)
{
	struct heapmodel m;
	struct hr_binary *bin = pool_heap(&m);
	struct hr_error err = { 0 };
	struct hm_run run;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	hm_run(&run, &m, bin, true, NULL);
	hm_check_reach(&m, &run);
	f = open_memstream(&text, &len);
	assert_non_null(f);
	assert_int_equal(hr_write_chain_report(f, run.tree, 5.0, &err), 0);
	assert_int_equal(fclose(f), 0);
	assert_string_equal(text,
		"# heapref: 976 bytes in 10 objects reachable; bytes and objects are cumulative; "
		"chains under 5% of the bytes are merged into <other>\n"
		"         bytes   share      objects  chain\n"
		"           976 100.00%           10  (everything reachable from the roots)\n"
		"           944  96.72%            8    main.pool\n"
		"           536  54.92%            2      [0]. (*main.Buf)\n"
		"           512  52.46%            1        data. ([]uint8)\n"
		"            24   2.46%            1        <self>\n"
		"           280  28.69%            2      [1]. (*main.Buf)\n"
		"           256  26.23%            1        data. ([]uint8)\n"
		"            24   2.46%            1        <self>\n"
		"            72   7.38%            2      [2]. (*main.Buf)\n"
		"            56   5.74%            2      <other> (own value and 1 smaller chain)\n"
		"            32   3.28%            2    <other> (1 smaller chain)\n");
	free(text);
	hm_run_release(&run);
	hr_binary_free(bin);
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * A sample per chain node with an own value, its stack leaf first, labelled with its
 * root: here each line "chain: objects bytes root=ROOT", sorted.
 */
static void test_pprof_of_a_scan(void **state)
{
	struct heapmodel m;
	struct hr_binary *bin = pool_heap(&m);
	struct hr_error err = { 0 };
	struct hm_run run;
	FILE *f = tmpfile();
	char *lines[16], text[2048] = "";
	Perftools__Profiles__Profile *p;
	uint8_t *raw;
	size_t len;

	(void)state;
	hm_run(&run, &m, bin, true, NULL);
	assert_non_null(f);
	assert_int_equal(hr_write_pprof(f, run.tree, NULL, &err), 0);
	raw = pr_gunzip(f, &len);
	p = perftools__profiles__profile__unpack(NULL, len, raw);
	assert_non_null(p);
	assert_int_equal(p->n_sample, 10);
	for (size_t i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];
		size_t used = 0;

		lines[i] = malloc(512);
		assert_non_null(lines[i]);
		for (size_t k = s->n_location_id; k-- > 0;)
			used += (size_t)snprintf(lines[i] + used, 512 - used, "%s%s",
						 k + 1 < s->n_location_id ? " -> " : "",
						 pr_location_name(p, s->location_id[k]));
		assert_int_equal(s->n_value, 2);
		snprintf(lines[i] + used, 512 - used, ": %lld %lld root=%s\n", (long long)s->value[0],
			 (long long)s->value[1], pr_label(p, s, "root"));
	}
	qsort(lines, p->n_sample, sizeof(*lines), cmp_line);
	for (size_t i = 0; i < p->n_sample; i++) {
		strcat(text, lines[i]);
		free(lines[i]);
	}
	assert_string_equal(text,
		"main.last -> data. ([]uint8): 1 8 root=main.last\n"
		"main.last: 1 24 root=main.last\n"
		"main.pool -> [0]. (*main.Buf) -> data. ([]uint8): 1 512 root=main.pool\n"
		"main.pool -> [0]. (*main.Buf): 1 24 root=main.pool\n"
		"main.pool -> [1]. (*main.Buf) -> data. ([]uint8): 1 256 root=main.pool\n"
		"main.pool -> [1]. (*main.Buf): 1 24 root=main.pool\n"
		"main.pool -> [2]. (*main.Buf) -> data. ([]uint8): 1 48 root=main.pool\n"
		"main.pool -> [2]. (*main.Buf): 1 24 root=main.pool\n"
		"main.pool -> [3]. (*main.Buf): 1 24 root=main.pool\n"
		"main.pool: 1 32 root=main.pool\n");
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(raw);
	fclose(f);
	hm_run_release(&run);
	hr_binary_free(bin);
}

/*
 * The suspects' JSON of names no real binary need have: quotes, backslashes, control
 * bytes, "</script>" and bytes that are not UTF-8 (a name cut inside a character) come
 * out as valid JSON that can stand inside an HTML <script>; valid UTF-8 stays as it is.
 */
static void test_suspects_json_escapes(void **state)
{
	char *roots[1] = { "main.caf\xc3\xa9\"\\\x01</script>&\xff\xe2\x82" };
	struct hr_suspect v = { .kind = HR_SUSPECT_ROOT, .bytes = 10, .objects = 1,
				.roots = roots, .nroots = 1 };
	struct hr_suspects s = { .reachable_bytes = 10, .reachable_objects = 1,
				 .threshold_percent = 10, .threshold_bytes = 1, .v = &v, .n = 1 };
	struct hr_suspects_options opt = { .format = HR_SUSPECTS_JSON, .binary = "b",
					   .dump = "d" };
	struct hr_error err = { 0 };
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	(void)state;
	v.point.what = v.point.type = v.point.chain = "x";
	assert_non_null(out);
	assert_int_equal(hr_write_suspects(out, &s, &opt, &err), 0);
	fclose(out);
	assert_non_null(strstr(text, "\"roots\":[\"main.caf\xc3\xa9\\\"\\\\\\u0001"
				     "\\u003c/script\\u003e\\u0026\\ufffd\\ufffd\\ufffd\"]"));
	assert_null(strchr(text, '<'));
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_report_of_a_scan),
		cmocka_unit_test(test_pprof_of_a_scan),
		cmocka_unit_test(test_suspects_json_escapes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
