/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_dump.c - fuzz target: the dump reader and its heap index (dump.h) on any bytes,
 * then what `heapref info` and `heapref object` do with a dump it accepts.
 *
 * A rejected input must fail with one HR_EINPUT line naming the file and a byte offset.
 * An accepted one must give an index that agrees with itself: objects sorted and apart,
 * each found at its first and last byte and not just outside, its pointer bits the same
 * through every accessor, frames in depth order inside their goroutine's range. Reading
 * the second half of the records with another thread (which large dumps get) must give
 * the same result, or the same error.
 */
#include <string.h>

#include "dump_internal.h" /* dump_open_bytes_split(): the two-thread reader, at any size */
#include "fuzz_target.h"
#include "heapref/dump.h"
#include "heapref/writers.h"

#define NAME "fuzz.hdump"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

static uint64_t popcount_words(const uint64_t *w, uint64_t n)
{
	uint64_t c = 0;

	for (uint64_t i = 0; i < n; i++)
		c += (uint64_t)__builtin_popcountll(w[i]);
	return c;
}

/* The object's own bytes and the bytes just outside it find it, and only them. */
static void check_lookup(const struct hr_dump *d, size_t i, struct hr_object o)
{
	uint64_t start = 0, size = 0;
	int64_t at;

	FUZZ_CHECK(hr_dump_object_at(d, o.addr) == (int64_t)i, "object %zu at 0x%llx", i,
		   (unsigned long long)o.addr);
	FUZZ_CHECK(hr_dump_object_at(d, o.addr + o.size - 1) == (int64_t)i,
		   "last byte of object %zu", i);
	at = hr_dump_object_span_at(d, o.addr + o.size / 2, &start, &size);
	FUZZ_CHECK(at == (int64_t)i && start == o.addr && size == o.size,
		   "span of object %zu: %lld 0x%llx+%llu", i, (long long)at,
		   (unsigned long long)start, (unsigned long long)size);
	if (o.addr > 0)
		FUZZ_CHECK(hr_dump_object_at(d, o.addr - 1) != (int64_t)i, "byte before %zu", i);
	if (o.addr + o.size > o.addr)
		FUZZ_CHECK(hr_dump_object_at(d, o.addr + o.size) != (int64_t)i, "byte after %zu", i);
}

/* The object's pointer bits: copied, counted and asked word by word, all the same. */
static uint64_t check_ptr_bits(const struct hr_dump *d, size_t i, struct hr_object o,
			       uint64_t **bits, size_t *cap)
{
	uint32_t ps = hr_dump_params(d)->ptr_size;
	uint64_t nwords = o.size / ps, count;

	if (hr_bit_words(nwords) + 1 > *cap) {
		free(*bits);
		*cap = (size_t)hr_bit_words(nwords) + 1;
		*bits = malloc(*cap * sizeof(uint64_t));
		FUZZ_CHECK(*bits, "out of memory for %zu words", *cap);
	}
	hr_dump_object_ptr_bits(d, i, *bits);
	count = hr_dump_object_ptr_count(d, i);
	FUZZ_CHECK(count == popcount_words(*bits, hr_bit_words(nwords)),
		   "object %zu: %llu pointer words counted, the copy has others", i,
		   (unsigned long long)count);
	for (uint64_t w = 0; w < nwords; w++) {
		bool bit = hr_bit_get(*bits, w);

		FUZZ_CHECK(bit == hr_dump_heap_ptr_bit(d, o.addr + w * ps),
			   "object %zu word %llu", i, (unsigned long long)w);
		if (bit) /* where the pointer leads: what `heapref object` prints */
			(void)hr_dump_object_at(d, hr_dump_word(d, o.data + w * ps));
	}
	return count;
}

static void check_objects(const struct hr_dump *d, const uint8_t *data, size_t size)
{
	size_t n = hr_dump_object_count(d), cap = 0;
	uint64_t bytes = 0, ptrs = 0, *bits = NULL;
	struct hr_object prev = { 0 };

	for (size_t i = 0; i < n; i++) {
		struct hr_object o = hr_dump_object(d, i);

		FUZZ_CHECK(o.size > 0 && o.data >= data && o.data + o.size <= data + size,
			   "object %zu's contents lie outside the input", i);
		if (i > 0)
			FUZZ_CHECK(prev.addr + prev.size <= o.addr, "objects %zu and %zu overlap",
				   i - 1, i);
		check_lookup(d, i, o);
		ptrs += check_ptr_bits(d, i, o, &bits, &cap);
		bytes += o.size;
		prev = o;
	}
	free(bits);
	FUZZ_CHECK(bytes == hr_dump_object_bytes(d), "object bytes %llu",
		   (unsigned long long)bytes);
	FUZZ_CHECK(ptrs == hr_dump_heap_ptr_words(d), "pointer words %llu",
		   (unsigned long long)ptrs);
}

static void check_frames(const struct hr_dump *d)
{
	size_t ng, nf;
	const struct hr_goroutine *g = hr_dump_goroutines(d, &ng);
	const struct hr_frame *f = hr_dump_frames(d, &nf);
	uint32_t ps = hr_dump_params(d)->ptr_size;

	for (size_t i = 0; i < ng; i++) {
		FUZZ_CHECK((uint64_t)g[i].first_frame + g[i].frame_count <= nf,
			   "goroutine %zu's frames run past the end", i);
		for (uint32_t k = 0; k < g[i].frame_count; k++) {
			const struct hr_frame *fr = &f[g[i].first_frame + k];

			FUZZ_CHECK(fr->goroutine == i, "frame of goroutine %zu says %u", i,
				   fr->goroutine);
			if (k > 0)
				FUZZ_CHECK(fr[-1].depth <= fr->depth, "frames out of depth order");
			for (uint64_t w = 0; w <= fr->contents.len / ps; w++) /* one past: false */
				(void)hr_dump_frame_ptr_bit(d, fr, w);
		}
	}
}

static void check_memprof(const struct hr_dump *d)
{
	size_t nb, nf;
	const struct hr_memprof_bucket *b = hr_dump_memprof_buckets(d, &nb);

	(void)hr_dump_memprof_frames(d, &nf);
	for (size_t i = 0; i < nb; i++)
		FUZZ_CHECK((uint64_t)b[i].first_frame + b[i].frame_count <= nf,
			   "bucket %zu's frames run past the end", i);
}

/* What `heapref info` and `heapref object` print, written nowhere. */
static void write_views(const struct hr_dump *d)
{
	FILE *out = fopen("/dev/null", "w");
	struct hr_error err = { 0 };
	size_t n = hr_dump_object_count(d);

	FUZZ_CHECK(out, "cannot open /dev/null");
	FUZZ_CHECK(hr_write_dump_info(out, d, &err) == 0, "info: %s", err.msg);
	for (size_t i = 0; i < n && i < 64; i++) {
		struct hr_object o = hr_dump_object(d, i);

		FUZZ_CHECK(hr_write_object_at(out, d, o.addr + o.size / 2, 16, &err) == 0,
			   "object view: %s", err.msg);
	}
	FUZZ_CHECK(hr_write_object_at(out, d, 0, 16, &err) == 0, "object view: %s", err.msg);
	fclose(out);
}

/*
 * The same dump read with the second half on another thread, as plan says: same
 * objects, or error.
 */
static void check_split(const uint8_t *data, size_t size, const struct hr_dump *one,
			const struct hr_error *one_err, const struct dump_split_plan *plan)
{
	struct hr_error err = { 0 };
	struct hr_dump *two = dump_open_bytes_planned(data, size, NAME, plan, &err);
	size_t n;

	FUZZ_CHECK(!two == !one, "split read: %s; one thread: %s", two ? "accepted" : err.msg,
		   one ? "accepted" : one_err->msg);
	if (!two) {
		FUZZ_CHECK(err.code == one_err->code && !strcmp(err.msg, one_err->msg),
			   "split read: %s; one thread: %s", err.msg, one_err->msg);
		return;
	}
	n = hr_dump_object_count(one);
	FUZZ_CHECK(hr_dump_object_count(two) == n &&
			   hr_dump_object_bytes(two) == hr_dump_object_bytes(one) &&
			   hr_dump_heap_ptr_words(two) == hr_dump_heap_ptr_words(one),
		   "split read: %zu objects, one thread: %zu", hr_dump_object_count(two), n);
	for (size_t i = 0; i < n; i++) {
		struct hr_object a = hr_dump_object(one, i), b = hr_dump_object(two, i);

		FUZZ_CHECK(a.addr == b.addr && a.size == b.size && a.data == b.data &&
				   hr_dump_object_ptr_count(one, i) == hr_dump_object_ptr_count(two, i),
			   "object %zu differs in the split read", i);
	}
	for (unsigned k = 0; k < HR_REC_KIND_COUNT; k++)
		FUZZ_CHECK(hr_dump_record_count(one, k) == hr_dump_record_count(two, k),
			   "%s records differ in the split read", hr_record_kind_name(k));
	hr_dump_free(two);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hr_error err = { 0 };
	struct hr_dump *d = hr_dump_open_bytes(data, size, NAME, &err);

	/* split at the middle of the estimated cost; and a steal made sure of, from the
	 * middle of the part before a second half of the last quarter */
	check_split(data, size, d, &err, &(struct dump_split_plan){ .split_min = 1 });
	check_split(data, size, d, &err, &(struct dump_split_plan){
		.split_at = size - size / 4, .steal_at = size / 2, .steal_wait = true });
	if (!d) {
		FUZZ_CHECK_ERROR(&err, HR_EINPUT, NAME ": byte ");
		return 0;
	}
	FUZZ_CHECK(hr_dump_params(d)->ptr_size == 4 || hr_dump_params(d)->ptr_size == 8,
		   "pointer size %u", hr_dump_params(d)->ptr_size);
	check_objects(d, data, size);
	check_frames(d);
	check_memprof(d);
	write_views(d);
	hr_dump_free(d);
	return 0;
}
