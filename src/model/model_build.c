/* SPDX-License-Identifier: Apache-2.0 */
/*
 * model_build.c - the model built one element at a time (model.h's hr_dump_build_*):
 * the core reader hands over what it found in a core file or a process, and the same
 * index and tables come out as the dump reader makes from a heap dump.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "model_internal.h"

#define STR_BLOCK_MIN 4096

static int nomem(struct hr_dump *d, struct hr_error *err)
{
	return hr_error_set(err, HR_ENOMEM, "%s: out of memory", d->path);
}

struct hr_dump *hr_dump_build_begin(const char *name, const uint8_t *map, size_t map_len,
				    bool owns_map, const struct hr_dump_params *params,
				    struct hr_error *err)
{
	struct hr_dump *d = NULL;
	int rc = HR_ENOMEM;

	/* the index finds a word by a shift: only a power of two, and only Go's two sizes */
	if (params->ptr_size != 4 && params->ptr_size != 8)
		rc = HR_EUSAGE;
	else if ((d = calloc(1, sizeof(*d))) && (d->path = strdup(name)) &&
		 !heap_index_init(&d->heap, params->ptr_size))
		rc = HR_OK;
	if (rc) { /* the mapping is ours from the call on, whatever fails */
		if (d)
			free(d->path);
		free(d);
		if (owns_map && map)
			munmap((void *)map, map_len);
		if (rc == HR_EUSAGE)
			hr_error_set(err, rc, "%s: pointer size %" PRIu32 " (want 4 or 8)", name,
				     params->ptr_size);
		else
			hr_error_set(err, rc, "%s: out of memory", name);
		return NULL;
	}
	d->map = map;
	d->map_len = map_len;
	d->owns_map = owns_map;
	d->prov = (struct hr_provenance){ .source = HR_SOURCE_CORE, .go_version = "",
					  .caveat = "" };
	d->params = *params;
	d->have_params = true;
	d->counts[HR_REC_PARAMS] = 1;
	return d;
}

/* Whether [p, p + len) lies in one piece of the model's memory: its file, or a block. */
static bool in_model_memory(const struct hr_dump *d, const uint8_t *p, uint64_t len)
{
	uintptr_t at = (uintptr_t)p;

	if (d->map && at >= (uintptr_t)d->map && at - (uintptr_t)d->map <= d->map_len &&
	    len <= d->map_len - (at - (uintptr_t)d->map))
		return true;
	for (const struct mem_block *b = d->memory; b; b = b->next)
		if (at >= (uintptr_t)b->bytes && at - (uintptr_t)b->bytes <= b->len &&
		    len <= b->len - (at - (uintptr_t)b->bytes))
			return true;
	return false;
}

uint8_t *hr_dump_build_memory(struct hr_dump *d, uint64_t len, struct hr_error *err)
{
	struct mem_block *b = len <= SIZE_MAX - sizeof(*b) ? calloc(1, sizeof(*b) + len) : NULL;

	if (!b) {
		nomem(d, err);
		return NULL;
	}
	b->len = len;
	b->next = d->memory;
	d->memory = b;
	return b->bytes;
}

int hr_dump_build_object(struct hr_dump *d, uint64_t addr, uint64_t size,
			 const uint8_t *contents, struct hr_error *err)
{
	if (size == 0 || !in_model_memory(d, contents, size))
		return hr_error_set(err, HR_EUSAGE, "%s: object 0x%" PRIx64 " (%" PRIu64
				    " bytes) is in no memory of the model", d->path, addr, size);
	if (heap_index_add(&d->heap, addr, size, contents))
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
				    .ptr_bits = bits };
	d->counts[is_data ? HR_REC_DATA : HR_REC_BSS] = 1;
	return HR_OK;
}

/* len bytes in the model's blocks of strings, to fill; NULL when out of memory. */
static char *str_alloc(struct hr_dump *d, size_t len)
{
	struct str_block *b = d->strings;

	if (!b || b->cap - b->used < len) {
		size_t cap = len > STR_BLOCK_MIN ? len : STR_BLOCK_MIN;

		b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		b->used = 0;
		b->cap = cap;
		b->next = d->strings;
		d->strings = b;
	}
	b->used += len;
	return b->bytes + b->used - len;
}

struct hr_bytes hr_dump_build_string(struct hr_dump *d, const char *s, size_t len)
{
	char *copy = str_alloc(d, len);

	if (!copy)
		return (struct hr_bytes){ NULL, 0 };
	memcpy(copy, s, len);
	return (struct hr_bytes){ (const uint8_t *)copy, len };
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

void hr_dump_build_partial_stack(struct hr_dump *d)
{
	if (d->goroutines_n)
		d->goroutines[d->goroutines_n - 1].partial_stack = true;
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

int hr_dump_build_frame_name(struct hr_dump *d, size_t index, const char *func, size_t len,
			     bool inlined, struct hr_error *err)
{
	struct hr_bytes name;

	if (index >= d->bucket_frames_n)
		return hr_error_set(err, HR_EUSAGE, "memory profile frame %zu of %zu", index,
				    d->bucket_frames_n);
	name = hr_dump_build_string(d, func, len);
	if (!name.ptr)
		return nomem(d, err);
	d->bucket_frames[index].func = name;
	d->bucket_frames[index].inlined = inlined;
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
	return heap_index_finish(&d->heap, d->path, d->map, d->map_len, err);
}

void dump_build_release(struct hr_dump *d)
{
	while (d->memory) {
		struct mem_block *next = d->memory->next;

		free(d->memory);
		d->memory = next;
	}
	while (d->strings) {
		struct str_block *next = d->strings->next;

		free(d->strings);
		d->strings = next;
	}
}

const char *model_copy_string(struct hr_dump *d, struct hr_bytes s)
{
	char *copy = s.len < SIZE_MAX ? str_alloc(d, (size_t)s.len + 1) : NULL;

	if (!copy)
		return NULL;
	memcpy(copy, s.ptr, (size_t)s.len);
	copy[s.len] = 0;
	return copy;
}

void hr_dump_build_caveat(struct hr_dump *d, const char *text)
{
	const char *copy = model_copy_string(d, (struct hr_bytes){ (const uint8_t *)text,
								   strlen(text) });

	d->prov.caveat = copy ? copy : "";
}

int hr_dump_build_provenance(struct hr_dump *d, enum hr_source source, const char *go_version,
			     struct hr_error *err)
{
	const char *copy = model_copy_string(d, (struct hr_bytes){ (const uint8_t *)go_version,
								   strlen(go_version) });

	if (!copy)
		return nomem(d, err);
	d->prov.source = source;
	d->prov.go_version = copy;
	return HR_OK;
}
