/* SPDX-License-Identifier: Apache-2.0 */
/* heapmodel.c - hand-made process memory, its dump, its reachability and its scan (heapmodel.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "heapmodel.h"

void hm_init(struct heapmodel *m, const char *go_version)
{
	memset(m, 0, sizeof(*m));
	m->go_version = go_version;
}

static struct hm_region *add_region(struct heapmodel *m, enum hm_kind kind, uint64_t addr,
				    uint64_t size)
{
	struct hm_region *r;

	if (m->n == HM_MAX_REGIONS || size % 8 || size / 8 > HM_MAX_WORDS || addr % 8)
		fail_msg("heapmodel: region 0x%llx of %llu bytes", (unsigned long long)addr,
			 (unsigned long long)size);
	r = &m->regions[m->n++];
	*r = (struct hm_region){ .kind = kind, .addr = addr, .size = size };
	return r;
}

void hm_object(struct heapmodel *m, uint64_t addr, uint64_t size)
{
	add_region(m, HM_OBJECT, addr, size);
}

void hm_segment(struct heapmodel *m, enum hm_kind kind, uint64_t addr, uint64_t size)
{
	add_region(m, kind, addr, size);
}

void hm_frame(struct heapmodel *m, uint64_t sp, uint64_t size, uint64_t entry_pc, uint64_t pc,
	      const char *func)
{
	struct hm_region *r = add_region(m, HM_FRAME, sp, size);

	r->entry_pc = entry_pc;
	r->pc = pc;
	r->func = func;
}

static void set_word(struct heapmodel *m, uint64_t at, uint64_t value, bool ptr)
{
	for (size_t i = 0; i < m->n; i++) {
		struct hm_region *r = &m->regions[i];
		uint64_t w = (at - r->addr) / 8;

		if (at < r->addr || at - r->addr >= r->size)
			continue;
		if (at % 8)
			fail_msg("heapmodel: word at 0x%llx is not aligned", (unsigned long long)at);
		r->words[w] = value;
		if (ptr)
			hr_bit_set(r->ptrs, w);
		else
			hr_bit_clear(r->ptrs, w);
		return;
	}
	fail_msg("heapmodel: no region holds 0x%llx", (unsigned long long)at);
}

void hm_ptr(struct heapmodel *m, uint64_t at, uint64_t value)
{
	set_word(m, at, value, true);
}

void hm_word(struct heapmodel *m, uint64_t at, uint64_t value)
{
	set_word(m, at, value, false);
}

void hm_itab(struct heapmodel *m, uint64_t addr, uint64_t type_addr)
{
	if (m->nitabs == sizeof(m->itabs) / sizeof(m->itabs[0]))
		fail_msg("heapmodel: too many itabs");
	m->itabs[m->nitabs][0] = addr;
	m->itabs[m->nitabs++][1] = type_addr;
}

/* A region's bytes (little-endian words) and pointer offsets, for its record. */
static size_t region_bytes(const struct hm_region *r, uint8_t *mem, uint64_t *offsets)
{
	size_t nptrs = 0;

	for (uint64_t w = 0; w < r->size / 8; w++) {
		for (unsigned b = 0; b < 8; b++)
			mem[8 * w + b] = (uint8_t)(r->words[w] >> (8 * b));
		if (hr_bit_get(r->ptrs, w))
			offsets[nptrs++] = 8 * w;
	}
	return nptrs;
}

void hm_dump(const struct heapmodel *m, struct dumpbuf *b)
{
	uint8_t mem[8 * HM_MAX_WORDS];
	uint64_t offsets[HM_MAX_WORDS], depth = 0, child_sp = 0;
	bool goroutine = false;

	memset(b, 0, sizeof(*b));
	db_header(b);
	db_params_version(b, HM_HEAP, HM_HEAP + (UINT64_C(64) << 20), m->go_version);
	for (size_t i = 0; i < m->nitabs; i++)
		db_itab(b, m->itabs[i][0], m->itabs[i][1]);
	for (size_t i = 0; i < m->n; i++) {
		const struct hm_region *r = &m->regions[i];
		size_t nptrs = region_bytes(r, mem, offsets);

		if (r->kind == HM_OBJECT)
			db_object_mem(b, r->addr, mem, r->size, offsets, nptrs);
	}
	for (size_t i = 0; i < m->n; i++) {
		const struct hm_region *r = &m->regions[i];
		size_t nptrs = region_bytes(r, mem, offsets);

		if (r->kind != HM_FRAME)
			continue;
		if (!goroutine) /* goroutine 1, waiting, its stack from the running frame */
			db_goroutine(b, 0xc000001000, r->addr, 1, 0x401000, 4, "chan receive");
		goroutine = true;
		db_frame(b, r->addr, depth++, child_sp, mem, r->size, r->entry_pc, r->pc, r->func,
			 offsets, nptrs);
		child_sp = r->addr;
	}
	for (size_t i = 0; i < m->n; i++) {
		const struct hm_region *r = &m->regions[i];
		size_t nptrs = region_bytes(r, mem, offsets);

		if (r->kind == HM_DATA || r->kind == HM_BSS)
			db_segment(b, r->kind == HM_DATA ? DB_DATA : DB_BSS, r->addr, mem, r->size,
				   offsets, nptrs);
	}
	db_eof(b);
}

/* The object (region index) holding addr, or -1. */
static int object_at(const struct heapmodel *m, uint64_t addr)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->regions[i].kind == HM_OBJECT && addr >= m->regions[i].addr &&
		    addr - m->regions[i].addr < m->regions[i].size)
			return (int)i;
	return -1;
}

void hm_reach(const struct heapmodel *m, uint64_t *objects, uint64_t *bytes)
{
	bool seen[HM_MAX_REGIONS] = { false };
	size_t queue[HM_MAX_REGIONS], head = 0, tail = 0;

	*objects = *bytes = 0;
	/* the roots first, then each object reached, each word of each */
	for (size_t i = 0; i < m->n; i++)
		if (m->regions[i].kind != HM_OBJECT)
			queue[tail++] = i;
	while (head < tail) {
		const struct hm_region *r = &m->regions[queue[head++]];

		for (uint64_t w = 0; w < r->size / 8; w++) {
			int o = hr_bit_get(r->ptrs, w) ? object_at(m, r->words[w]) : -1;

			if (o < 0 || seen[o])
				continue;
			seen[o] = true;
			queue[tail++] = (size_t)o;
			*objects += 1;
			*bytes += m->regions[o].size;
		}
	}
}

void hm_run_request(struct hm_run *r, const struct heapmodel *m, const struct hr_binary *bin,
		    const struct hr_analysis_request *rq)
{
	struct hr_analysis_request want = *rq;
	struct hr_error err = { 0 };

	memset(r, 0, sizeof(*r));
	hm_dump(m, &r->buf);
	r->dump = hr_dump_open_bytes(r->buf.bytes, r->buf.len, "t.dump", &err);
	if (!r->dump)
		fail_msg("the dump: %s", err.msg);
	if (!want.max_depth)
		want.max_depth = 256;
	if (hr_analysis_run(r->dump, bin, &want, &r->an, &err))
		fail_msg("the analysis: %s", err.msg);
	r->tree = r->an.tree;
	r->sum = hr_result_summary(r->an.result);
}

void hm_run(struct hm_run *r, const struct heapmodel *m, struct hr_binary *bin, bool fold,
	    const struct hr_scan_options *opts)
{
	struct hr_analysis_request rq = { .full_chains = !fold };

	if (opts)
		rq.scan = *opts;
	hm_run_request(r, m, bin, &rq);
}

void hm_run_release(struct hm_run *r)
{
	hr_analysis_release(&r->an);
	hr_dump_free(r->dump);
	dumpbuf_release(&r->buf);
	memset(r, 0, sizeof(*r));
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Node's chain, root first: "a -> b -> c" (the tree keeps at most 256 levels); caller frees. */
static char *chain_of(const struct hr_chains *t, uint32_t node)
{
	uint32_t path[256];
	size_t n = 0, len = 1;
	char *out;

	for (uint32_t id = node; id != HR_CHAINS_TOP && n < 256; id = hr_chains_node(t, id)->parent) {
		path[n++] = id;
		len += strlen(hr_chains_name(t, hr_chains_node(t, id)->name)) + 4;
	}
	out = calloc(1, len);
	assert_non_null(out);
	while (n-- > 0) {
		if (out[0])
			strcat(out, " -> ");
		strcat(out, hr_chains_name(t, hr_chains_node(t, path[n])->name));
	}
	return out;
}

char *hm_tree_text(const struct hr_chains *t)
{
	size_t n = hr_chains_count(t), len = 1;
	char **lines = calloc(n, sizeof(*lines));
	char *text;

	assert_non_null(lines);
	for (uint32_t id = 1; id < n; id++) {
		const struct hr_chain_node *node = hr_chains_node(t, id);
		char *chain = chain_of(t, id);

		lines[id - 1] = malloc(strlen(chain) + 64);
		assert_non_null(lines[id - 1]);
		sprintf(lines[id - 1], "%s: %llu %llu\n", chain, (unsigned long long)node->objects,
			(unsigned long long)node->bytes);
		len += strlen(lines[id - 1]);
		free(chain);
	}
	qsort(lines, n - 1, sizeof(*lines), cmp_line);
	text = calloc(1, len);
	assert_non_null(text);
	for (size_t i = 0; i + 1 < n; i++) {
		strcat(text, lines[i]);
		free(lines[i]);
	}
	free(lines);
	return text;
}

void hm_check_reach(const struct heapmodel *m, const struct hm_run *r)
{
	const struct hr_scan_summary *s = r->sum;
	uint64_t objects, bytes, tree_objects, tree_bytes;

	hm_reach(m, &objects, &bytes);
	hr_chains_totals(r->tree, &tree_objects, &tree_bytes);
	assert_int_equal(tree_objects, objects);
	assert_int_equal(tree_bytes, bytes);
	assert_int_equal(s->typed_objects + s->fallback_objects, objects);
	assert_int_equal(s->typed_bytes + s->fallback_bytes, bytes);
	assert_int_equal(s->unreachable_objects, hr_dump_object_count(r->dump) - objects);
}
