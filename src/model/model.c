/* SPDX-License-Identifier: Apache-2.0 */
/*
 * model.c - the heap model's lifecycle and accessors (model.h): what every stage after
 * the front ends reads, whichever front end built it. Its object index is in
 * heap_index.c; the calls that build it, in model_build.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "model_internal.h"

/* --- names ------------------------------------------------------------------------ */

const char *hr_record_kind_name(unsigned kind)
{
	static const char *const names[HR_REC_KIND_COUNT] = {
		"EOF", "object", "other root", "type", "goroutine", "stack frame",
		"params", "finalizer", "itab", "OS thread", "memstats", "queued finalizer",
		"data segment", "bss segment", "defer", "panic", "memory profile",
		"alloc sample", "stack root", "data root",
	};

	return kind < HR_REC_KIND_COUNT ? names[kind] : "unknown";
}

const char *hr_goroutine_status_name(uint64_t status)
{
	static const char *const names[] = {
		"idle", "runnable", "running", "syscall", "waiting", "moribund",
		"dead", "enqueue", "copystack", "preempted", "leaked", "deadextra",
	};

	return status < sizeof(names) / sizeof(names[0]) ? names[status] : "unknown";
}

void hr_dump_free(struct hr_dump *d)
{
	if (!d)
		return;
	if (d->owns_map)
		munmap((void *)d->map, d->map_len);
	heap_index_release(&d->heap);
	free(d->data_bits);
	free(d->bss_bits);
	free(d->goroutines);
	free(d->frames);
	free(d->frame_bits);
	free(d->finalizers);
	free(d->queued);
	free(d->itabs);
	free(d->threads);
	free(d->other_roots);
	free(d->root_pointers);
	free(d->buckets);
	free(d->bucket_frames);
	free(d->samples);
	free(d->dump.obj_types);
	free(d->dump.types);
	free(d->dump.defers);
	free(d->dump.panics);
	dump_build_release(d);
	free(d->path);
	free(d);
}

/* --- where it came from ------------------------------------------------------------ */

const struct hr_provenance *hr_dump_provenance(const struct hr_dump *d)
{
	return &d->prov;
}

void hr_dump_describe(const struct hr_dump *d, char *buf, size_t len)
{
	static const char *const sources[] = { "dump", "core", "process" };
	const struct hr_provenance *p = &d->prov;
	char format[32];
	const char *version = p->go_version;

	if (!version[0] && p->dump_format) { /* go1.3 and go1.4 record no release */
		snprintf(format, sizeof(format), "go1.%u%s", p->dump_format,
			 p->prerelease ? " pre-release" : "");
		version = format;
	}
	snprintf(buf, len, "%s %.*s%s%s", version[0] ? version : "go?",
		 (int)d->params.goarch.len, (const char *)d->params.goarch.ptr,
		 d->params.goarch.len ? " " : "", sources[p->source < 3 ? p->source : 0]);
}

/* --- accessors -------------------------------------------------------------------- */

uint64_t hr_goroutine_waited_ns(const struct hr_dump_params *p, const struct hr_goroutine *g)
{
	return p->now_ns && g->wait_since && g->wait_since <= p->now_ns ? p->now_ns - g->wait_since
									 : 0;
}

const char *hr_dump_path(const struct hr_dump *d) { return d->path; }
uint64_t hr_dump_file_size(const struct hr_dump *d) { return d->map_len; }
const struct hr_dump_params *hr_dump_params(const struct hr_dump *d) { return &d->params; }

uint64_t hr_dump_record_count(const struct hr_dump *d, unsigned kind)
{
	return kind < HR_REC_KIND_COUNT ? d->counts[kind] : 0;
}

uint64_t hr_dump_word(const struct hr_dump *d, const uint8_t *p)
{
	uint64_t v = 0;
	uint32_t i, n = d->params.ptr_size;

	if (n == 8 && !d->params.big_endian) /* the usual dump: compilers make this one load */
		return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 |
		       (uint64_t)p[3] << 24 | (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 |
		       (uint64_t)p[6] << 48 | (uint64_t)p[7] << 56;
	for (i = 0; i < n; i++) {
		unsigned shift = d->params.big_endian ? 8 * (n - 1 - i) : 8 * i;

		v |= (uint64_t)p[i] << shift;
	}
	return v;
}

size_t hr_dump_object_count(const struct hr_dump *d) { return d->heap.nobj; }
uint64_t hr_dump_object_bytes(const struct hr_dump *d) { return d->heap.total_bytes; }

struct hr_object hr_dump_object(const struct hr_dump *d, size_t i)
{
	struct heap_span span;
	const uint8_t *data = heap_contents(heap_index_object(&d->heap, i, &span));

	return (struct hr_object){ .addr = span.addr, .size = span.size, .data = data };
}

int64_t hr_dump_object_at(const struct hr_dump *d, uint64_t addr)
{
	return heap_index_find(&d->heap, addr);
}

int64_t hr_dump_object_leaf_at(const struct hr_dump *d, uint64_t addr, bool *pointer_free)
{
	struct heap_span span;
	int64_t i = heap_index_locate(&d->heap, addr, &span);

	*pointer_free = i >= 0 && heap_index_span_pointer_free(&d->heap, span.addr, span.size);
	return i;
}

bool hr_dump_word_into(const struct hr_dump *d, uint32_t holder, uint32_t target,
		       uint64_t *offset)
{
	struct hr_object h = hr_dump_object(d, holder), t = hr_dump_object(d, target);
	uint32_t ps = d->params.ptr_size;

	for (uint64_t off = 0; ps && off + ps <= h.size; off += ps) {
		uint64_t v;

		if (!hr_dump_heap_ptr_bit(d, h.addr + off))
			continue;
		v = hr_dump_word(d, h.data + off);
		if (v >= t.addr && v - t.addr < t.size) {
			*offset = off;
			return true;
		}
	}
	return false;
}

static bool frame_points_into(const struct hr_dump *d, const struct hr_frame *f,
			      const struct hr_object *o)
{
	uint32_t ps = d->params.ptr_size;

	for (uint64_t off = 0; ps && off + ps <= f->contents.len; off += ps) {
		uint64_t v = hr_dump_word(d, f->contents.ptr + off);

		if (v >= o->addr && v - o->addr < o->size)
			return true;
	}
	return false;
}

bool hr_frame_holds_root(const struct hr_frame *f, const char *root)
{
	size_t fl = f->func_name.len, len = strlen(root);

	if (fl > len || memcmp(root, f->func_name.ptr, fl))
		return false;
	/* the function itself, or the function and one more name (no '.' in a variable's) */
	return fl == len || (root[fl] == '.' && !strchr(root + fl + 1, '.'));
}

int64_t hr_dump_frame_goroutine(const struct hr_dump *d, const char *root, uint32_t obj)
{
	size_t nf;
	const struct hr_frame *f = hr_dump_frames(d, &nf);
	struct hr_object o = hr_dump_object(d, obj);

	for (size_t k = 0; k < nf; k++)
		if (hr_frame_holds_root(&f[k], root) && frame_points_into(d, &f[k], &o))
			return f[k].goroutine;
	return -1;
}

int64_t hr_dump_object_span_at(const struct hr_dump *d, uint64_t addr, uint64_t *start,
			       uint64_t *size)
{
	struct heap_span span;
	int64_t i = heap_index_locate(&d->heap, addr, &span);

	if (i >= 0) {
		*start = span.addr;
		*size = span.size;
	}
	return i;
}

bool hr_dump_span_pointer_free(const struct hr_dump *d, uint64_t start, uint64_t size)
{
	return heap_index_span_pointer_free(&d->heap, start, size);
}

void hr_dump_prefetch_object(const struct hr_dump *d, size_t i, uint64_t offset,
			     enum hr_prefetch_stage stage)
{
	heap_index_prefetch(&d->heap, i, offset, stage);
}

bool hr_dump_heap_ptr_bit(const struct hr_dump *d, uint64_t addr)
{
	return heap_index_ptr_bit(&d->heap, addr);
}

uint64_t hr_dump_heap_ptr_words(const struct hr_dump *d)
{
	uint64_t n = 0, i, words = (uint64_t)d->heap.bit_blocks * d->heap.block_words;

	for (i = 0; i < words; i++)
		n += heap_popcount(d->heap.bit_pool[i]);
	return n;
}

void hr_dump_object_ptr_bits(const struct hr_dump *d, size_t i, uint64_t *out)
{
	struct hr_object o = hr_dump_object(d, i);

	heap_index_copy_bits(&d->heap, o.addr, o.size / d->params.ptr_size, out);
}

void hr_dump_ptr_bits_at(const struct hr_dump *d, uint64_t addr, uint64_t nwords, uint64_t *out)
{
	heap_index_copy_bits(&d->heap, addr, nwords, out);
}

uint64_t hr_dump_object_ptr_count(const struct hr_dump *d, size_t i)
{
	struct hr_object o = hr_dump_object(d, i);

	return heap_index_count_bits(&d->heap, o.addr, o.size / d->params.ptr_size);
}

const struct hr_segment *hr_dump_data(const struct hr_dump *d) { return &d->data; }
const struct hr_segment *hr_dump_bss(const struct hr_dump *d) { return &d->bss; }

#define ARRAY_ACCESSOR(fn, type, field)                                   \
	const type *fn(const struct hr_dump *d, size_t *count)            \
	{                                                                 \
		*count = d->field##_n;                                    \
		return d->field;                                          \
	}

ARRAY_ACCESSOR(hr_dump_goroutines, struct hr_goroutine, goroutines)
ARRAY_ACCESSOR(hr_dump_frames, struct hr_frame, frames)
ARRAY_ACCESSOR(hr_dump_finalizers, struct hr_finalizer, finalizers)
ARRAY_ACCESSOR(hr_dump_queued_finalizers, struct hr_finalizer, queued)
ARRAY_ACCESSOR(hr_dump_itabs, struct hr_itab, itabs)
ARRAY_ACCESSOR(hr_dump_os_threads, struct hr_os_thread, threads)
ARRAY_ACCESSOR(hr_dump_other_roots, struct hr_other_root, other_roots)
ARRAY_ACCESSOR(hr_dump_root_pointers, struct hr_root_pointer, root_pointers)
ARRAY_ACCESSOR(hr_dump_memprof_buckets, struct hr_memprof_bucket, buckets)
ARRAY_ACCESSOR(hr_dump_memprof_frames, struct hr_memprof_frame, bucket_frames)

/* A frame of the runtime's own: "runtime." or "internal/runtime/" functions. */
static bool runtime_frame(const struct hr_memprof_frame *f)
{
	return (f->func.len >= 8 && !memcmp(f->func.ptr, "runtime.", 8)) ||
	       (f->func.len >= 17 && !memcmp(f->func.ptr, "internal/runtime/", 17));
}

void hr_dump_memprof_shown(const struct hr_dump *d, const struct hr_memprof_bucket *b,
			   uint32_t *first, uint32_t *count)
{
	size_t nf;
	const struct hr_memprof_frame *f = hr_dump_memprof_frames(d, &nf) + b->first_frame;
	uint32_t skip = 0, n = b->frame_count;

	while (skip < n && runtime_frame(&f[skip]))
		skip++;
	if (skip == n)
		skip = 0;
	if (n - skip > 1 && f[n - 1].func.len == 14 && !memcmp(f[n - 1].func.ptr, "runtime.goexit", 14))
		n--;
	*first = b->first_frame + skip;
	*count = n - skip;
}
ARRAY_ACCESSOR(hr_dump_alloc_samples, struct hr_alloc_sample, samples)

bool hr_dump_frame_ptr_bit(const struct hr_dump *d, const struct hr_frame *f, uint64_t word)
{
	if (word >= f->contents.len / d->params.ptr_size)
		return false;
	return hr_bit_get(d->frame_bits, f->bits_index + word);
}




uint64_t hr_dump_index_bytes(const struct hr_dump *d)
{
	return heap_index_bytes(&d->heap) + d->frame_bits_cap * sizeof(uint64_t) +
	       d->frames_cap * sizeof(*d->frames) + d->goroutines_cap * sizeof(*d->goroutines);
}
