/*
 * dump_build.c - the model (struct hr_dump) built by another front end than the dump
 * parser: the core reader hands over what it found in a core file or a process, one
 * element at a time, and the same index and tables come out as from a heap dump. See
 * "the model built by another front end" in dump.h.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "dump_internal.h"

#define STR_BLOCK_MIN 4096

static int nomem(struct hr_dump *d, struct hr_error *err)
{
	return hr_error_set(err, HR_ENOMEM, "%s: out of memory", d->path);
}

struct hr_dump *hr_dump_build_begin(const char *name, const uint8_t *map, size_t map_len,
				    bool owns_map, const struct hr_dump_params *params,
				    struct hr_error *err)
{
	struct hr_dump *d = calloc(1, sizeof(*d));

	if (d)
		d->path = strdup(name);
	if (!d || !d->path || heap_index_init(&d->heap, map, params->ptr_size)) {
		if (d)
			free(d->path);
		free(d);
		if (owns_map && map)
			munmap((void *)map, map_len);
		hr_error_set(err, HR_ENOMEM, "%s: out of memory", name);
		return NULL;
	}
	d->map = map;
	d->map_len = map_len;
	d->owns_map = owns_map;
	d->source = HR_SOURCE_CORE;
	d->params = *params;
	d->have_params = true;
	d->counts[HR_REC_PARAMS] = 1;
	return d;
}

int hr_dump_build_object(struct hr_dump *d, uint64_t addr, uint64_t size, uint64_t offset,
			 struct hr_error *err)
{
	if (offset > d->map_len || size > d->map_len - offset || size == 0 ||
	    offset >= OBJ_MAX_FILE_OFFSET)
		return hr_error_set(err, HR_EINPUT, "%s: object 0x%" PRIx64 " (%" PRIu64
				    " bytes) is not inside the file", d->path, addr, size);
	if (heap_index_add(&d->heap, addr, size, offset))
		return nomem(d, err);
	d->counts[HR_REC_OBJECT]++;
	return HR_OK;
}

int hr_dump_build_ptr(struct hr_dump *d, uint64_t addr, struct hr_error *err)
{
	int rc = heap_index_set_ptr(&d->heap, addr);

	if (rc == HR_ENOMEM)
		return nomem(d, err);
	if (rc)
		return hr_error_set(err, HR_EUSAGE, "%s: pointer word 0x%" PRIx64
				    " outside the objects built", d->path, addr);
	return HR_OK;
}

int hr_dump_build_segment(struct hr_dump *d, bool is_data, uint64_t addr, struct hr_bytes contents,
			  const uint64_t *ptr_bits, struct hr_error *err)
{
	struct hr_segment *seg = is_data ? &d->data : &d->bss;
	size_t words = hr_bit_words(contents.len / d->params.ptr_size) + 1;
	uint64_t *bits = calloc(words, sizeof(*bits));

	if (!bits)
		return nomem(d, err);
	memcpy(bits, ptr_bits, (words - 1) * sizeof(*bits));
	free(is_data ? d->data_bits : d->bss_bits);
	if (is_data)
		d->data_bits = bits;
	else
		d->bss_bits = bits;
	*seg = (struct hr_segment){ .present = true, .addr = addr, .contents = contents,
				    .ptr_bits = bits,
				    .file_offset = contents.ptr ? (uint64_t)(contents.ptr - d->map) : 0 };
	d->counts[is_data ? HR_REC_DATA : HR_REC_BSS] = 1;
	return HR_OK;
}

struct hr_bytes hr_dump_build_string(struct hr_dump *d, const char *s, size_t len)
{
	struct str_block *b = d->strings;

	if (!b || b->cap - b->used < len) {
		size_t cap = len > STR_BLOCK_MIN ? len : STR_BLOCK_MIN;

		b = malloc(sizeof(*b) + cap);
		if (!b)
			return (struct hr_bytes){ NULL, 0 };
		b->used = 0;
		b->cap = cap;
		b->next = d->strings;
		d->strings = b;
	}
	memcpy(b->bytes + b->used, s, len);
	b->used += len;
	return (struct hr_bytes){ (const uint8_t *)b->bytes + b->used - len, len };
}

int hr_dump_build_goroutine(struct hr_dump *d, const struct hr_goroutine *g, struct hr_error *err)
{
	struct hr_goroutine *slot;

	if (d->goroutines_n >= UINT32_MAX || d->frames_n >= UINT32_MAX)
		return hr_error_set(err, HR_EINPUT, "%s: too many goroutines", d->path);
	slot = VEC_PUSH(d, goroutines);
	if (!slot)
		return nomem(d, err);
	*slot = *g;
	slot->first_frame = (uint32_t)d->frames_n;
	slot->frame_count = 0;
	d->counts[HR_REC_GOROUTINE]++;
	return HR_OK;
}

int hr_dump_build_frame(struct hr_dump *d, const struct hr_frame *f, const uint64_t *ptr_bits,
			struct hr_error *err)
{
	uint64_t nwords = f->contents.len / d->params.ptr_size;
	size_t first = d->frame_bits_n, words = hr_bit_words(nwords);
	struct hr_frame *slot;

	if (!d->goroutines_n)
		return hr_error_set(err, HR_EUSAGE, "%s: a frame before any goroutine", d->path);
	if (hr_array_reserve((void **)&d->frame_bits, &d->frame_bits_cap, first + words + 1,
			     sizeof(uint64_t)))
		return nomem(d, err);
	memcpy(d->frame_bits + first, ptr_bits, words * sizeof(uint64_t));
	d->frame_bits_n += words;
	slot = VEC_PUSH(d, frames);
	if (!slot)
		return nomem(d, err);
	*slot = *f;
	slot->bits_index = first * 64;
	slot->goroutine = (uint32_t)(d->goroutines_n - 1);
	d->goroutines[d->goroutines_n - 1].frame_count++;
	d->counts[HR_REC_STACK_FRAME]++;
	return HR_OK;
}

int hr_dump_build_finalizer(struct hr_dump *d, bool queued, const struct hr_finalizer *f,
			    struct hr_error *err)
{
	struct hr_finalizer *slot = queued ? VEC_PUSH(d, queued) : VEC_PUSH(d, finalizers);

	if (!slot)
		return nomem(d, err);
	*slot = *f;
	d->counts[queued ? HR_REC_QUEUED_FINALIZER : HR_REC_FINALIZER]++;
	return HR_OK;
}

int hr_dump_build_memprof(struct hr_dump *d, const struct hr_memprof_bucket *b,
			  const struct hr_memprof_frame *frames, struct hr_error *err)
{
	struct hr_memprof_bucket *slot;

	if (d->bucket_frames_n + b->frame_count >= UINT32_MAX)
		return hr_error_set(err, HR_EINPUT, "%s: too many memory profile frames", d->path);
	if (hr_array_reserve((void **)&d->bucket_frames, &d->bucket_frames_cap,
			     d->bucket_frames_n + b->frame_count + 1, sizeof(*frames)))
		return nomem(d, err);
	slot = VEC_PUSH(d, buckets);
	if (!slot)
		return nomem(d, err);
	*slot = *b;
	slot->first_frame = (uint32_t)d->bucket_frames_n;
	memcpy(d->bucket_frames + d->bucket_frames_n, frames, b->frame_count * sizeof(*frames));
	d->bucket_frames_n += b->frame_count;
	d->counts[HR_REC_MEMPROF]++;
	return HR_OK;
}

int hr_dump_build_alloc_sample(struct hr_dump *d, const struct hr_alloc_sample *s,
			       struct hr_error *err)
{
	struct hr_alloc_sample *slot = VEC_PUSH(d, samples);

	if (!slot)
		return nomem(d, err);
	*slot = *s;
	d->counts[HR_REC_ALLOC_SAMPLE]++;
	return HR_OK;
}

int hr_dump_build_itab(struct hr_dump *d, const struct hr_itab *it, struct hr_error *err)
{
	struct hr_itab *slot = VEC_PUSH(d, itabs);

	if (!slot)
		return nomem(d, err);
	*slot = *it;
	d->counts[HR_REC_ITAB]++;
	return HR_OK;
}

int hr_dump_build_os_thread(struct hr_dump *d, const struct hr_os_thread *t, struct hr_error *err)
{
	struct hr_os_thread *slot = VEC_PUSH(d, threads);

	if (!slot)
		return nomem(d, err);
	*slot = *t;
	d->counts[HR_REC_OS_THREAD]++;
	return HR_OK;
}

void hr_dump_build_params(struct hr_dump *d, const struct hr_dump_params *params)
{
	d->params = *params;
}

int hr_dump_build_finish(struct hr_dump *d, struct hr_error *err)
{
	return heap_index_finish(&d->heap, d->path, err);
}

void dump_build_release(struct hr_dump *d)
{
	while (d->strings) {
		struct str_block *next = d->strings->next;

		free(d->strings);
		d->strings = next;
	}
}

enum hr_source hr_dump_source(const struct hr_dump *d)
{
	return d->source;
}

void hr_dump_build_caveat(struct hr_dump *d, const char *text)
{
	struct hr_bytes b = hr_dump_build_string(d, text, strlen(text) + 1);

	d->caveat = b.ptr ? (const char *)b.ptr : NULL;
}

const char *hr_dump_caveat(const struct hr_dump *d)
{
	return d->caveat ? d->caveat : "";
}
