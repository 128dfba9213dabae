/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_dump_reader.c - the dump reader on hand-made byte sequences: every record kind
 * read back field by field, and every fault reported with its exact byte offset.
 */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dumpbuf.h"
#include "dumpcheck.h"
#include "heapref/dump.h"

#define HEAP_START UINT64_C(0xc000000000)
#define HEAP_END (HEAP_START + (UINT64_C(64) << 20))

static int bytes_eq(struct hr_bytes b, const char *s)
{
	return b.len == strlen(s) && memcmp(b.ptr, s, b.len) == 0;
}

static void start_dump(struct dumpbuf *b)
{
	memset(b, 0, sizeof(*b));
	db_header(b);
	db_params(b, HEAP_START, HEAP_END);
}

/* ---------------------------------------------------------------------------------- */
/* Every record kind                                                                   */

static void add_all_kinds(struct dumpbuf *b)
{
	static const uint64_t obj_ptrs[] = { 8, 0 };
	static const uint64_t frame_ptrs[] = { 16, 0, 16 }; /* out of order, repeated */
	static const uint64_t seg_ptrs[] = { 8 };
	uint8_t frame[24] = { 1, 2, 3 }, seg[16] = { 9 };

	db_uvarint(b, 3); /* type */
	db_uvarint(b, 0x4a0000);
	db_uvarint(b, 24);
	db_string(b, "main.Entry");
	db_bool(b, 1);
	db_uvarint(b, 8); /* itab */
	db_uvarint(b, 0x4b0000);
	db_uvarint(b, 0x4a0000);
	db_object(b, HEAP_START + 0x2000, 32, 0xab, obj_ptrs, 2);
	db_uvarint(b, 4); /* goroutine */
	db_uvarint(b, 0xc000001000);
	db_uvarint(b, 0xc000100000);
	db_uvarint(b, 17);
	db_uvarint(b, 0x401000);
	db_uvarint(b, 4);
	db_bool(b, 0);
	db_bool(b, 1);
	db_uvarint(b, 123456789);
	db_string(b, "chan receive");
	db_uvarint(b, 0xc0000aa000);
	db_uvarint(b, 0xc0000bb000);
	db_uvarint(b, 0xc0000cc000);
	db_uvarint(b, 0xc0000dd000);
	for (int depth = 0; depth < 2; depth++) { /* stack frames */
		db_uvarint(b, 5);
		db_uvarint(b, 0xc000100000 + 24 * (uint64_t)depth);
		db_uvarint(b, (uint64_t)depth);
		db_uvarint(b, depth ? 0xc000100000 : 0);
		db_mem(b, frame, sizeof(frame));
		db_uvarint(b, 0x402000 + (uint64_t)depth);
		db_uvarint(b, 0x402010 + (uint64_t)depth);
		db_uvarint(b, 0x402020 + (uint64_t)depth);
		db_string(b, depth ? "main.main" : "main.worker");
		db_fields(b, frame_ptrs, depth ? 1 : 3);
	}
	db_uvarint(b, 14); /* defer */
	for (uint64_t v = 1; v <= 7; v++)
		db_uvarint(b, 100 + v);
	db_uvarint(b, 15); /* panic */
	for (uint64_t v = 1; v <= 6; v++)
		db_uvarint(b, 200 + v);
	db_uvarint(b, 9); /* OS thread */
	db_uvarint(b, 0xc000300000);
	db_uvarint(b, 3);
	db_uvarint(b, 4242);
	db_uvarint(b, 12); /* data */
	db_uvarint(b, 0x500000);
	db_mem(b, seg, sizeof(seg));
	db_fields(b, seg_ptrs, 1);
	db_uvarint(b, 13); /* bss */
	db_uvarint(b, 0x600000);
	db_mem(b, seg, 8);
	db_fields(b, NULL, 0);
	db_uvarint(b, 7); /* finalizer */
	for (uint64_t v = 1; v <= 5; v++)
		db_uvarint(b, 300 + v);
	db_uvarint(b, 11); /* queued finalizer */
	for (uint64_t v = 1; v <= 5; v++)
		db_uvarint(b, 400 + v);
	db_uvarint(b, 2); /* other root */
	db_string(b, "finq");
	db_uvarint(b, HEAP_START + 0x2008);
	db_uvarint(b, 10); /* memstats */
	for (uint64_t v = 0; v < 24 + 256 + 1; v++)
		db_uvarint(b, 1000 + v);
	db_uvarint(b, 16); /* memory profile bucket */
	db_uvarint(b, 0x77);
	db_uvarint(b, 1024);
	db_uvarint(b, 2);
	db_string(b, "main.alloc");
	db_string(b, "/src/main.go");
	db_uvarint(b, 42);
	db_string(b, "main.main");
	db_string(b, "/src/main.go");
	db_uvarint(b, 7);
	db_uvarint(b, 5);
	db_uvarint(b, 2);
	db_uvarint(b, 17); /* alloc sample */
	db_uvarint(b, HEAP_START + 0x2000);
	db_uvarint(b, 0x77);
	db_eof(b);
}

static void test_every_record_kind(void **state)
{
	struct dumpbuf b;
	struct hr_dump *d;
	size_t n;

	start_dump(&b);
	add_all_kinds(&b);
	d = open_ok(&b);

	assert_int_equal(hr_dump_format_minor(d), 7);
	for (unsigned k = 0; k < HR_REC_KIND_COUNT; k++) /* the go1.5 kinds, each once */
		assert_int_equal(hr_dump_record_count(d, k),
				 k == HR_REC_STACK_FRAME ? 2 : k < HR_REC_GO_KINDS ? 1 : 0);

	const struct hr_dump_params *p = hr_dump_params(d);
	assert_false(p->big_endian);
	assert_int_equal(p->ptr_size, 8);
	assert_int_equal(p->heap_start, HEAP_START);
	assert_int_equal(p->heap_end, HEAP_END);
	assert_true(bytes_eq(p->goarch, "amd64"));
	assert_int_equal(p->ncpu, 2);
	assert_string_equal(hr_dump_provenance(d)->go_version, "go1.26.8");
	assert_int_equal(hr_dump_provenance(d)->source, HR_SOURCE_DUMP);
	assert_int_equal(hr_dump_provenance(d)->dump_format, 7);

	const struct hr_type_record *t = hr_dump_types(d, &n);
	assert_int_equal(n, 1);
	assert_int_equal(t->addr, 0x4a0000);
	assert_int_equal(t->size, 24);
	assert_true(bytes_eq(t->name, "main.Entry"));
	assert_true(t->data_is_ptr);

	const struct hr_itab *it = hr_dump_itabs(d, &n);
	assert_int_equal(n, 1);
	assert_int_equal(it->addr, 0x4b0000);
	assert_int_equal(it->type_addr, 0x4a0000);

	assert_int_equal(hr_dump_object_count(d), 1);
	struct hr_object o = hr_dump_object(d, 0);
	assert_int_equal(o.addr, HEAP_START + 0x2000);
	assert_int_equal(o.size, 32);
	assert_int_equal(o.data[0], 0xab);
	assert_int_equal(o.data[31], 0xab);
	assert_true(hr_dump_heap_ptr_bit(d, o.addr));
	assert_true(hr_dump_heap_ptr_bit(d, o.addr + 8));
	assert_false(hr_dump_heap_ptr_bit(d, o.addr + 16));
	assert_int_equal(hr_dump_object_ptr_count(d, 0), 2);
	assert_int_equal(hr_dump_heap_ptr_words(d), 2);

	const struct hr_goroutine *g = hr_dump_goroutines(d, &n);
	assert_int_equal(n, 1);
	assert_int_equal(g->addr, 0xc000001000);
	assert_int_equal(g->sp, 0xc000100000);
	assert_int_equal(g->goid, 17);
	assert_int_equal(g->gopc, 0x401000);
	assert_int_equal(g->status, 4);
	assert_string_equal(hr_goroutine_status_name(g->status), "waiting");
	assert_false(g->is_system);
	assert_true(g->is_background);
	assert_int_equal(g->wait_since, 123456789);
	assert_true(bytes_eq(g->wait_reason, "chan receive"));
	assert_int_equal(g->ctxt, 0xc0000aa000);
	assert_int_equal(g->thread, 0xc0000bb000);
	assert_int_equal(g->top_defer, 0xc0000cc000);
	assert_int_equal(g->top_panic, 0xc0000dd000);
	assert_int_equal(g->first_frame, 0);
	assert_int_equal(g->frame_count, 2);

	const struct hr_frame *f = hr_dump_frames(d, &n);
	assert_int_equal(n, 2);
	assert_int_equal(f[0].depth, 0);
	assert_int_equal(f[0].sp, 0xc000100000);
	assert_int_equal(f[0].child_sp, 0);
	assert_int_equal(f[0].contents.len, 24);
	assert_int_equal(f[0].contents.ptr[2], 3);
	assert_int_equal(f[0].entry_pc, 0x402000);
	assert_int_equal(f[0].pc, 0x402010);
	assert_int_equal(f[0].cont_pc, 0x402020);
	assert_true(bytes_eq(f[0].func_name, "main.worker"));
	assert_int_equal(f[0].goroutine, 0);
	assert_true(hr_dump_frame_ptr_bit(d, &f[0], 0));
	assert_false(hr_dump_frame_ptr_bit(d, &f[0], 1));
	assert_true(hr_dump_frame_ptr_bit(d, &f[0], 2));
	assert_false(hr_dump_frame_ptr_bit(d, &f[0], 3)); /* past the frame */
	assert_int_equal(f[1].depth, 1);
	assert_int_equal(f[1].child_sp, 0xc000100000);
	assert_true(bytes_eq(f[1].func_name, "main.main"));
	assert_false(hr_dump_frame_ptr_bit(d, &f[1], 0));
	assert_true(hr_dump_frame_ptr_bit(d, &f[1], 2));

	const struct hr_defer *df = hr_dump_defers(d, &n);
	assert_int_equal(n, 1);
	assert_int_equal(df->addr, 101);
	assert_int_equal(df->goroutine, 102);
	assert_int_equal(df->argp, 103);
	assert_int_equal(df->pc, 104);
	assert_int_equal(df->fn, 105);
	assert_int_equal(df->fn_pc, 106);
	assert_int_equal(df->link, 107);

	const struct hr_panic *pn = hr_dump_panics(d, &n);
	assert_int_equal(n, 1);
	assert_int_equal(pn->addr, 201);
	assert_int_equal(pn->goroutine, 202);
	assert_int_equal(pn->arg_type, 203);
	assert_int_equal(pn->arg_data, 204);
	assert_int_equal(pn->defer, 205);
	assert_int_equal(pn->link, 206);

	const struct hr_os_thread *th = hr_dump_os_threads(d, &n);
	assert_int_equal(n, 1);
	assert_int_equal(th->addr, 0xc000300000);
	assert_int_equal(th->id, 3);
	assert_int_equal(th->os_id, 4242);

	const struct hr_segment *data = hr_dump_data(d), *bss = hr_dump_bss(d);
	assert_true(data->present);
	assert_int_equal(data->addr, 0x500000);
	assert_int_equal(data->contents.len, 16);
	assert_int_equal(data->contents.ptr[0], 9);
	assert_false(hr_bit_get(data->ptr_bits, 0));
	assert_true(hr_bit_get(data->ptr_bits, 1));
	assert_true(bss->present);
	assert_int_equal(bss->addr, 0x600000);
	assert_int_equal(bss->contents.len, 8);
	assert_false(hr_bit_get(bss->ptr_bits, 0));

	const struct hr_finalizer *fin = hr_dump_finalizers(d, &n);
	assert_int_equal(n, 1);
	assert_int_equal(fin->obj, 301);
	assert_int_equal(fin->fn, 302);
	assert_int_equal(fin->fn_pc, 303);
	assert_int_equal(fin->arg_type, 304);
	assert_int_equal(fin->obj_type, 305);
	fin = hr_dump_queued_finalizers(d, &n);
	assert_int_equal(n, 1);
	assert_int_equal(fin->obj, 401);
	assert_int_equal(fin->obj_type, 405);

	const struct hr_other_root *r = hr_dump_other_roots(d, &n);
	assert_int_equal(n, 1);
	assert_true(bytes_eq(r->description, "finq"));
	assert_int_equal(r->ptr, HEAP_START + 0x2008);

	const struct hr_memstats *ms = hr_dump_memstats(d);
	assert_non_null(ms);
	assert_int_equal(ms->alloc, 1000);
	assert_int_equal(ms->heap_alloc, 1006);
	assert_int_equal(ms->heap_objects, 1011);
	assert_int_equal(ms->pause_total_ns, 1023);
	assert_int_equal(ms->pause_ns[0], 1024);
	assert_int_equal(ms->pause_ns[255], 1279);
	assert_int_equal(ms->num_gc, 1280);

	const struct hr_memprof_bucket *bk = hr_dump_memprof_buckets(d, &n);
	assert_int_equal(n, 1);
	assert_int_equal(bk->id, 0x77);
	assert_int_equal(bk->size, 1024);
	assert_int_equal(bk->frame_count, 2);
	assert_int_equal(bk->allocs, 5);
	assert_int_equal(bk->frees, 2);
	const struct hr_memprof_frame *mf = hr_dump_memprof_frames(d, &n);
	assert_int_equal(n, 2);
	assert_true(bytes_eq(mf[bk->first_frame].func, "main.alloc"));
	assert_true(bytes_eq(mf[bk->first_frame].file, "/src/main.go"));
	assert_int_equal(mf[bk->first_frame].line, 42);
	assert_true(bytes_eq(mf[bk->first_frame + 1].func, "main.main"));
	assert_int_equal(mf[bk->first_frame + 1].line, 7);

	const struct hr_alloc_sample *sm = hr_dump_alloc_samples(d, &n);
	assert_int_equal(n, 1);
	assert_int_equal(sm->addr, HEAP_START + 0x2000);
	assert_int_equal(sm->bucket_id, 0x77);

	hr_dump_free(d);
	dumpbuf_release(&b);
}

static void test_older_headers(void **state)
{
	static const char *const headers[] = { "go1.5 heap dump\n", "go1.6 heap dump\n" };

	for (unsigned i = 0; i < 2; i++) {
		struct dumpbuf b = { 0 };
		struct hr_dump *d;

		db_raw(&b, headers[i], 16);
		db_params(&b, HEAP_START, HEAP_END);
		db_eof(&b);
		d = open_ok(&b);
		assert_int_equal(hr_dump_format_minor(d), 5 + i);
		hr_dump_free(d);
		dumpbuf_release(&b);
	}
}

static void add_goroutine(struct dumpbuf *b)
{
	db_uvarint(b, 4);
	for (int i = 0; i < 5; i++)
		db_uvarint(b, 1);
	db_bool(b, 0);
	db_bool(b, 0);
	db_uvarint(b, 0);
	db_string(b, "select");
	for (int i = 0; i < 4; i++)
		db_uvarint(b, 0);
}

static void test_frames_put_in_depth_order(void **state)
{
	struct dumpbuf b;
	struct hr_dump *d;
	uint8_t frame[8] = { 0 };
	size_t n;

	start_dump(&b);
	add_goroutine(&b);
	for (uint64_t depth = 3; depth-- > 0;) { /* depths 2, 1, 0 */
		db_uvarint(&b, 5);
		db_uvarint(&b, 0x1000 * (depth + 1));
		db_uvarint(&b, depth);
		db_uvarint(&b, 0);
		db_mem(&b, frame, sizeof(frame));
		db_uvarint(&b, 1);
		db_uvarint(&b, 1);
		db_uvarint(&b, 1);
		db_string(&b, "f");
		db_fields(&b, NULL, 0);
	}
	db_eof(&b);
	d = open_ok(&b);
	const struct hr_frame *f = hr_dump_frames(d, &n);
	assert_int_equal(n, 3);
	for (uint64_t i = 0; i < 3; i++) {
		assert_int_equal(f[i].depth, i);
		assert_int_equal(f[i].sp, 0x1000 * (i + 1));
	}
	hr_dump_free(d);
	dumpbuf_release(&b);
}

static void test_big_endian_4_byte_words(void **state)
{
	struct dumpbuf b = { 0 };
	struct hr_dump *d;
	static const uint64_t ptrs[] = { 4 };
	uint8_t mem[8] = { 0x11, 0x22, 0x33, 0x44, 0x0a, 0x0b, 0x0c, 0x0d };

	db_header(&b);
	db_uvarint(&b, 6);
	db_bool(&b, 1);
	db_uvarint(&b, 4);
	db_uvarint(&b, 0x10000000);
	db_uvarint(&b, 0x14000000);
	db_string(&b, "mips");
	db_string(&b, "go1.21.0");
	db_uvarint(&b, 1);
	db_uvarint(&b, 1);
	db_uvarint(&b, 0x10000100);
	db_mem(&b, mem, sizeof(mem));
	db_fields(&b, ptrs, 1);
	db_eof(&b);
	d = open_ok(&b);
	struct hr_object o = hr_dump_object(d, 0);
	assert_int_equal(hr_dump_word(d, o.data), 0x11223344);
	assert_int_equal(hr_dump_word(d, o.data + 4), 0x0a0b0c0d);
	assert_false(hr_dump_heap_ptr_bit(d, 0x10000100));
	assert_true(hr_dump_heap_ptr_bit(d, 0x10000104));
	hr_dump_free(d);
	dumpbuf_release(&b);
}

/* ---------------------------------------------------------------------------------- */
/* Faults                                                                              */

static void test_fault_empty_file(void **state)
{
	struct dumpbuf b = { 0 };

	db_raw(&b, "", 0);
	expect_fault(&b, 0, "bad header: the file is empty");
	dumpbuf_release(&b);
}

static void test_fault_bad_header(void **state)
{
	struct dumpbuf b = { 0 };

	db_raw(&b, "\x7f" "ELF and more bytes", 20);
	expect_fault(&b, 0, "bad header: an ELF file (a program?), not a Go heap dump");
	dumpbuf_release(&b);
	db_raw(&b, "text that is longer than a header", 33);
	expect_fault(&b, 0, "bad header: not a Go heap dump");
	dumpbuf_release(&b);
	db_raw(&b, "go1.7 heap du", 13);
	expect_fault(&b, 0, "bad header: not a Go heap dump");
	dumpbuf_release(&b);
	db_raw(&b, "go1.2 heap dump\n", 16);
	db_eof(&b);
	expect_fault(&b, 0, "go1.2 is older than heapref reads");
	dumpbuf_release(&b);
	db_raw(&b, "go1.8 heap dump\n", 16);
	db_eof(&b);
	expect_fault(&b, 0, "go1.8 is newer than heapref reads");
	dumpbuf_release(&b);
}

static void test_fault_no_eof(void **state)
{
	struct dumpbuf b;

	start_dump(&b);
	expect_fault(&b, b.len, "no EOF record: the file ends after 1 records");
	dumpbuf_release(&b);
}

static void test_fault_truncated_record(void **state)
{
	struct dumpbuf b;
	size_t at;

	start_dump(&b);
	db_uvarint(&b, 9); /* OS thread: address, then the file ends inside the id */
	db_uvarint(&b, 0xc000300000);
	at = b.len;
	db_raw(&b, "\x85", 1);
	expect_fault(&b, at, "truncated OS thread record: the file ends inside its OS thread field");
	dumpbuf_release(&b);
}

/*
 * Uvarints of every length, 1 to 10 bytes, at both ends of each length, and written
 * longer than they need to be (Go's reader takes that): the reader's one- and two-byte
 * paths, its word-at-a-time one (3 to 8 bytes) and its byte-by-byte one (9 and 10: no
 * word holds their end) give the values encoding/binary wrote. (The file's last bytes,
 * where fewer than 10 are left: test_uvarints_at_the_end.)
 */
static void test_uvarints_of_every_length(void **state)
{
	uint64_t want[2 * 10 + 4];
	size_t n = 0, got_n;
	struct dumpbuf b;
	struct hr_dump *d;

	for (unsigned bits = 7; bits < 64; bits += 7) { /* the largest of a length, the next */
		want[n++] = (UINT64_C(1) << bits) - 1;
		want[n++] = UINT64_C(1) << bits;
	}
	want[n++] = 0;
	want[n++] = UINT64_MAX;
	want[n++] = UINT64_C(0x0123456789abcdef);
	want[n++] = UINT64_C(0xc000123456); /* a heap address: 6 bytes */
	start_dump(&b);
	for (size_t i = 0; i < n; i++) {
		db_uvarint(&b, 3); /* a type record whose size is the value */
		db_uvarint(&b, 0x4a0000 + i);
		db_uvarint(&b, want[i]);
		db_string(&b, "T");
		db_bool(&b, 0);
	}
	db_uvarint(&b, 3); /* sizes 5 and 300 written in 3 and 4 bytes */
	db_uvarint(&b, 0x4b0000);
	db_raw(&b, "\x85\x80\x00", 3);
	db_string(&b, "T");
	db_bool(&b, 0);
	db_uvarint(&b, 3);
	db_uvarint(&b, 0x4b0001);
	db_raw(&b, "\xac\x82\x80\x00", 4);
	db_string(&b, "T");
	db_bool(&b, 0);
	db_eof(&b);
	d = open_ok(&b);

	const struct hr_type_record *t = hr_dump_types(d, &got_n);
	assert_int_equal(got_n, n + 2);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(t[i].addr, 0x4a0000 + i);
		assert_true(t[i].size == want[i]);
	}
	assert_int_equal(t[n].size, 5);
	assert_int_equal(t[n + 1].size, 300);
	hr_dump_free(d);
	dumpbuf_release(&b);
	(void)state;
}

/* A dump ending in an OS thread record (address, id, OS id), in a buffer of exactly its size. */
static struct hr_dump *open_thread_at_end(uint64_t id, uint64_t os_id, uint8_t **exact)
{
	struct hr_error err = { 0 };
	struct dumpbuf b;
	struct hr_dump *d;

	start_dump(&b);
	db_uvarint(&b, 9);
	db_uvarint(&b, 0xc000300000);
	db_uvarint(&b, id);
	db_uvarint(&b, os_id);
	db_eof(&b);
	*exact = malloc(b.len);
	assert_non_null(*exact);
	memcpy(*exact, b.bytes, b.len);
	d = hr_dump_open_bytes(*exact, b.len, "t.dump", &err);
	if (!d)
		fail_msg("id %" PRIu64 ", OS id %" PRIu64 ": %s", id, os_id, err.msg);
	dumpbuf_release(&b);
	return d;
}

/* The largest value a uvarint of len bytes holds. */
static uint64_t uvarint_max(unsigned len)
{
	return len >= 10 ? UINT64_MAX : (UINT64_C(1) << (7 * len)) - 1;
}

/*
 * The file's last bytes, read from a buffer of exactly the file's size (reading past it
 * is ASan's to report). An OS id of each length 1 to 10, one byte before the end: with
 * fewer than 10 bytes left the reader takes its checked byte-by-byte path. Then an id of
 * each length 1 to 8 with exactly 10 bytes left (the OS id after it takes the rest): its
 * unchecked paths, up to the last byte they may read.
 */
static void test_uvarints_at_the_end(void **state)
{
	(void)state;
	for (unsigned len = 1; len <= 10; len++) {
		uint8_t *exact;
		struct hr_dump *d = open_thread_at_end(1, uvarint_max(len), &exact);
		size_t n;
		const struct hr_os_thread *t = hr_dump_os_threads(d, &n);

		assert_int_equal(n, 1);
		assert_true(t[0].os_id == uvarint_max(len));
		hr_dump_free(d);
		free(exact);
	}
	for (unsigned len = 1; len <= 8; len++) {
		uint8_t *exact;
		struct hr_dump *d = open_thread_at_end(uvarint_max(len), uvarint_max(9 - len), &exact);
		size_t n;
		const struct hr_os_thread *t = hr_dump_os_threads(d, &n);

		assert_int_equal(n, 1);
		assert_true(t[0].id == uvarint_max(len));
		assert_true(t[0].os_id == uvarint_max(9 - len));
		hr_dump_free(d);
		free(exact);
	}
}

static void test_fault_varint_too_long(void **state)
{
	struct dumpbuf b;
	size_t at;

	start_dump(&b);
	db_uvarint(&b, 9);
	at = b.len;
	db_raw(&b, "\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01", 11);
	db_uvarint(&b, 1);
	db_uvarint(&b, 1);
	db_eof(&b);
	expect_fault(&b, at, "varint OS thread field is longer than 10 bytes");
	dumpbuf_release(&b);

	start_dump(&b);
	db_uvarint(&b, 9);
	at = b.len;
	db_raw(&b, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", 10);
	db_uvarint(&b, 1);
	db_uvarint(&b, 1);
	db_eof(&b);
	expect_fault(&b, at, "overflows 64 bits");
	dumpbuf_release(&b);
}

static void test_fault_length_past_end(void **state)
{
	struct dumpbuf b;
	size_t at, rec;
	char want[128];

	start_dump(&b);
	rec = b.len;
	db_uvarint(&b, 1);
	db_uvarint(&b, HEAP_START);
	at = b.len;
	db_uvarint(&b, UINT64_C(1) << 40); /* a terabyte of contents, in a tiny file */
	db_raw(&b, "abc", 3);
	/* said as a dump cut short, naming where the record starts */
	snprintf(want, sizeof(want), "truncated: the object record at byte %zu needs "
		 "1099511627776 bytes of contents, 3 are left", rec);
	expect_fault(&b, at, want);
	dumpbuf_release(&b);
}

static void test_fault_unknown_kind(void **state)
{
	struct dumpbuf b;
	size_t at;

	start_dump(&b);
	at = b.len;
	db_uvarint(&b, 18);
	db_eof(&b);
	expect_fault(&b, at, "unknown record kind 18");
	dumpbuf_release(&b);
}

static void test_fault_bytes_after_eof(void **state)
{
	struct dumpbuf b;
	size_t at;

	start_dump(&b);
	db_eof(&b);
	at = b.len;
	db_raw(&b, "xy", 2);
	expect_fault(&b, at, "2 bytes after the EOF record");
	dumpbuf_release(&b);
}

static void test_fault_field_outside_object(void **state)
{
	struct dumpbuf b;
	uint8_t mem[16] = { 0 };
	size_t at;

	start_dump(&b);
	db_uvarint(&b, 1);
	db_uvarint(&b, HEAP_START);
	db_mem(&b, mem, sizeof(mem));
	db_uvarint(&b, 1);
	db_uvarint(&b, 8);
	db_uvarint(&b, 1);
	at = b.len;
	db_uvarint(&b, 16);
	db_uvarint(&b, 0);
	db_eof(&b);
	expect_fault(&b, at, "field offset 16 lies outside the object (16 bytes)");
	dumpbuf_release(&b);
}

static void test_fault_field_outside_frame(void **state)
{
	struct dumpbuf b;
	uint8_t mem[24] = { 0 };
	size_t at;

	start_dump(&b);
	add_goroutine(&b);
	db_uvarint(&b, 5);
	db_uvarint(&b, 0xc000100000);
	db_uvarint(&b, 0);
	db_uvarint(&b, 0);
	db_mem(&b, mem, sizeof(mem));
	db_uvarint(&b, 1);
	db_uvarint(&b, 2);
	db_uvarint(&b, 3);
	db_string(&b, "main.f");
	db_uvarint(&b, 1);
	at = b.len;
	db_uvarint(&b, 24);
	db_uvarint(&b, 0);
	db_eof(&b);
	expect_fault(&b, at, "field offset 24 lies outside the stack frame (24 bytes)");
	dumpbuf_release(&b);
}

static void test_fault_field_outside_segment(void **state)
{
	struct dumpbuf b;
	uint8_t mem[8] = { 0 };
	size_t at;

	for (int kind = 12; kind <= 13; kind++) {
		start_dump(&b);
		db_uvarint(&b, (uint64_t)kind);
		db_uvarint(&b, 0x500000);
		db_mem(&b, mem, sizeof(mem));
		db_uvarint(&b, 1);
		at = b.len;
		db_uvarint(&b, 4096);
		db_uvarint(&b, 0);
		db_eof(&b);
		expect_fault(&b, at, kind == 12 ? "field offset 4096 lies outside the data segment (8 bytes)"
						: "field offset 4096 lies outside the bss segment (8 bytes)");
		dumpbuf_release(&b);
	}
}

static void test_fault_field_misaligned_or_bad_kind(void **state)
{
	struct dumpbuf b;
	uint8_t mem[16] = { 0 };
	size_t at;

	start_dump(&b);
	db_uvarint(&b, 1);
	db_uvarint(&b, HEAP_START);
	db_mem(&b, mem, sizeof(mem));
	db_uvarint(&b, 1);
	at = b.len;
	db_uvarint(&b, 4);
	db_uvarint(&b, 0);
	db_eof(&b);
	expect_fault(&b, at, "field offset 4 is not a multiple of the pointer size 8");
	dumpbuf_release(&b);

	start_dump(&b);
	db_uvarint(&b, 1);
	db_uvarint(&b, HEAP_START);
	db_mem(&b, mem, sizeof(mem));
	at = b.len;
	db_uvarint(&b, 2);
	db_uvarint(&b, 0);
	db_uvarint(&b, 0);
	db_eof(&b);
	expect_fault(&b, at, "field kind 2 in the object's field list");
	dumpbuf_release(&b);
}

static void test_fault_record_order_and_duplicates(void **state)
{
	struct dumpbuf b = { 0 };
	uint8_t mem[8] = { 0 };
	size_t at;

	db_header(&b); /* object before params */
	at = b.len;
	db_object(&b, HEAP_START, 16, 0, NULL, 0);
	db_eof(&b);
	expect_fault(&b, at, "object record before the params record");
	dumpbuf_release(&b);

	db_header(&b); /* no params at all */
	db_eof(&b);
	expect_fault(&b, 17, "no params record");
	dumpbuf_release(&b);

	start_dump(&b); /* frame without goroutine */
	at = b.len;
	db_uvarint(&b, 5);
	for (int i = 0; i < 3; i++)
		db_uvarint(&b, 0);
	db_mem(&b, mem, sizeof(mem));
	for (int i = 0; i < 3; i++)
		db_uvarint(&b, 0);
	db_string(&b, "f");
	db_fields(&b, NULL, 0);
	db_eof(&b);
	expect_fault(&b, at, "stack frame record before any goroutine record");
	dumpbuf_release(&b);

	start_dump(&b);
	at = b.len;
	db_params(&b, HEAP_START, HEAP_END);
	db_eof(&b);
	expect_fault(&b, at, "second params record");
	dumpbuf_release(&b);

	start_dump(&b);
	db_uvarint(&b, 12);
	db_uvarint(&b, 0x500000);
	db_mem(&b, mem, sizeof(mem));
	db_fields(&b, NULL, 0);
	at = b.len;
	db_uvarint(&b, 12);
	db_uvarint(&b, 0x500000);
	db_mem(&b, mem, sizeof(mem));
	db_fields(&b, NULL, 0);
	db_eof(&b);
	expect_fault(&b, at, "second data segment record");
	dumpbuf_release(&b);
}

static void test_fault_bad_params(void **state)
{
	struct dumpbuf b = { 0 };
	size_t at;

	db_header(&b);
	db_uvarint(&b, 6);
	db_bool(&b, 0);
	at = b.len;
	db_uvarint(&b, 3);
	expect_fault(&b, at, "pointer size 3 (want 4 or 8)");
	dumpbuf_release(&b);

	db_header(&b);
	db_uvarint(&b, 6);
	at = b.len;
	db_uvarint(&b, 2);
	expect_fault(&b, at, "big-endian flag is 2, not a bool");
	dumpbuf_release(&b);

	db_header(&b);
	db_uvarint(&b, 6);
	db_bool(&b, 0);
	db_uvarint(&b, 8);
	at = b.len;
	db_uvarint(&b, 0x2000);
	db_uvarint(&b, 0x1000);
	expect_fault(&b, at, "heap end 0x1000 is below heap start 0x2000");
	dumpbuf_release(&b);
}

static void test_fault_bad_objects(void **state)
{
	struct dumpbuf b;
	size_t at;

	start_dump(&b);
	at = b.len;
	db_object(&b, HEAP_END, 16, 0, NULL, 0);
	db_eof(&b);
	expect_fault(&b, at, "lies outside the heap range");
	dumpbuf_release(&b);

	start_dump(&b);
	at = b.len;
	db_object(&b, HEAP_START + 4, 16, 0, NULL, 0);
	db_eof(&b);
	expect_fault(&b, at, "object address 0xc000000004 is not pointer-aligned");
	dumpbuf_release(&b);

	start_dump(&b);
	db_object(&b, HEAP_START + 64, 32, 0, NULL, 0);
	db_object(&b, HEAP_START, 80, 0, NULL, 0);
	db_eof(&b);
	{
		struct hr_error err = { 0 };

		assert_null(hr_dump_open_bytes(b.bytes, b.len, "t.dump", &err));
		assert_non_null(strstr(err.msg, "object at 0xc000000040 overlaps the object at 0xc000000000"));
	}
	dumpbuf_release(&b);
}

/* Every proper prefix of a good dump is refused cleanly (run under ASan in CI). */
static void test_fault_every_truncation(void **state)
{
	struct dumpbuf b;
	size_t len;

	start_dump(&b);
	add_all_kinds(&b);
	for (len = 0; len < b.len; len++) {
		struct hr_error err = { 0 };
		struct hr_dump *d = hr_dump_open_bytes(b.bytes, len, "t.dump", &err);

		if (d)
			fail_msg("prefix of %zu bytes accepted", len);
		assert_int_equal(err.code, HR_EINPUT);
		assert_non_null(strstr(err.msg, "t.dump: byte "));
	}
	dumpbuf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_record_kind),
		cmocka_unit_test(test_older_headers),
		cmocka_unit_test(test_frames_put_in_depth_order),
		cmocka_unit_test(test_big_endian_4_byte_words),
		cmocka_unit_test(test_fault_empty_file),
		cmocka_unit_test(test_fault_bad_header),
		cmocka_unit_test(test_fault_no_eof),
		cmocka_unit_test(test_fault_truncated_record),
		cmocka_unit_test(test_uvarints_of_every_length),
		cmocka_unit_test(test_uvarints_at_the_end),
		cmocka_unit_test(test_fault_varint_too_long),
		cmocka_unit_test(test_fault_length_past_end),
		cmocka_unit_test(test_fault_unknown_kind),
		cmocka_unit_test(test_fault_bytes_after_eof),
		cmocka_unit_test(test_fault_field_outside_object),
		cmocka_unit_test(test_fault_field_outside_frame),
		cmocka_unit_test(test_fault_field_outside_segment),
		cmocka_unit_test(test_fault_field_misaligned_or_bad_kind),
		cmocka_unit_test(test_fault_record_order_and_duplicates),
		cmocka_unit_test(test_fault_bad_params),
		cmocka_unit_test(test_fault_bad_objects),
		cmocka_unit_test(test_fault_every_truncation),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
