/* SPDX-License-Identifier: Apache-2.0 */
/*
 * core_heap.c - the heap objects of a core, from the runtime's own structures: every
 * in-use span of mheap_.allspans, its allocated slots, and for each object the words
 * the garbage collector would scan as pointers, read the way the running Go reads them:
 *
 *   Go 1.22+    small objects (<= 512 bytes): one bit per word at the end of the span
 *               (before the Green Tea collector's inline mark bits, where those exist);
 *               larger ones: the type in the malloc header (first word) or, for a span
 *               of one large object, in span.largeType, its GC mask repeated over the
 *               object every type size, up to the type's pointer bytes;
 *   Go 1.20-21  one bit per word in the heap arena's bitmap, cut short by noMorePtrs;
 *   Go 1.19     two bits per word in the arena's bitmap: pointer, and "more pointers".
 *
 * A slot is allocated when it is below the span's free index for scanning or its alloc
 * bit is set, as runtime.WriteHeapDump decides. In a span the collector has marked but
 * not swept yet this also takes the objects the sweep would free: they are unreachable,
 * so no root leads to them, while the mark bits would miss objects allocated since, in a
 * span an mcache still holds.
 */
#include <elf.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core_internal.h"

#define SPAN_IN_USE 1           /* mSpanInUse */
#define PAGE_SIZE_GO 8192
#define TFLAG_GCMASK_ON_DEMAND 0x10 /* Go 1.24+: GCData points to a pointer to the mask */
#define AMD64_ARENA_BASE_OFFSET UINT64_C(0xffff800000000000)

/* What one span says about its slots. */
struct span {
	uint64_t addr;          /* of the mspan */
	uint64_t base, npages, elemsize, nelems;
	uint64_t free_scan;     /* slots below are allocated */
	uint64_t alloc_bits;    /* address of its gcBits */
	uint8_t spanclass;
	const uint8_t *mem;     /* its memory in the core; NULL when the core has none of it */
	bool part_missing;      /* some of it is not in the core: read as zeros */
};

/* A runtime type's size and pointer mask, read once per type. */
struct type_mask {
	uint64_t addr;
	uint64_t size;
	uint64_t ptrbytes;
	uint8_t *mask;          /* ptrbytes / ps bits, NULL when ptrbytes is 0 */
};

struct heap_walk {
	struct core_reader *r;
	struct type_mask *types; /* open addressing on addr, power-of-two size */
	size_t ntypes, types_cap;
	uint8_t *alloc;          /* scratch: the span's alloc bits */
	size_t alloc_cap;
	uint64_t unbuilt_masks;  /* objects whose type's on-demand mask was never built */
	uint64_t span_bytes;     /* of the in-use spans the core holds some of: at most its memory */
	uint64_t missing_objects, missing_bytes; /* allocated objects the core does not hold */
	uint64_t missing_span_bytes; /* of the in-use spans it holds none of: bounded */
	uint64_t unwritten_objects, unwritten_bytes; /* allocated, with no type and no pointer
						      * bits: never written, or lost */
	struct list_walk specials; /* every span's specials, under one bound */
};

static bool read_span(struct heap_walk *w, uint64_t addr, struct span *s)
{
	struct core_reader *r = w->r;
	const struct rt_layout *L = &r->L;
	if (cr_field(r, addr, &L->s_state, "mspan.state") != SPAN_IN_USE)
		return false;
	s->addr = addr;
	s->base = cr_field(r, addr, &L->s_start, "mspan.startAddr");
	s->npages = cr_field(r, addr, &L->s_npages, "mspan.npages");
	s->elemsize = cr_field(r, addr, &L->s_elemsize, "mspan.elemsize");
	s->nelems = cr_field(r, addr, &L->s_nelems, "mspan.nelems");
	s->spanclass = (uint8_t)cr_field(r, addr, &L->s_spanclass, "mspan.spanclass");
	s->free_scan = L->s_free_scan.present
			       ? cr_field(r, addr, &L->s_free_scan, "mspan.freeIndexForScan")
			       : cr_field(r, addr, &L->s_freeindex, "mspan.freeindex");
	s->alloc_bits = cr_field(r, addr, &L->s_alloc_bits, "mspan.allocBits");
	return !r->failed;
}

static int bad_span(struct core_reader *r, const struct span *s, const char *what)
{
	return hr_error_set(r->err, HR_EINPUT, "%s: span 0x%" PRIx64 " (heap 0x%" PRIx64 ", %" PRIu64
			    " pages, elements of %" PRIu64 " bytes): %s", r->img.path, s->addr,
			    s->base, s->npages, s->elemsize, what);
}

/*
 * The span's memory copied into the model, when the core holds it in several pieces
 * of the file, or holds only part of it (the rest zeros); NULL when out of memory (err
 * set). What is copied is bounded: the in-use spans the core holds any of together fit
 * in the core (check_span()).
 */
static const uint8_t *span_copy(struct core_reader *r, const struct span *s, uint64_t bytes)
{
	uint8_t *copy;

	if (!(copy = hr_dump_build_memory(r->model, bytes, r->err)))
		return NULL;
	core_read_or_zeros(&r->img, s->base, copy, (size_t)bytes);
	return copy;
}

/*
 * In-use spans a core holds none of are counted, not read: their alloc bits only (a
 * byte per 64 bytes of span at most), as long as they take no more than this many times
 * the memory the core holds (a core cut at 2 GB of a 16 GB heap lacks 7 times it).
 */
#define MISSING_RATIO 64
#define MISSING_RATIO_TEXT "64"

static int check_span(struct heap_walk *w, struct span *s)
{
	struct core_reader *r = w->r;
	uint64_t bytes = s->npages * PAGE_SIZE_GO, held;

	if (!s->npages || s->npages > (UINT64_C(1) << 40) / PAGE_SIZE_GO || s->base % PAGE_SIZE_GO ||
	    !s->elemsize || s->elemsize % r->ps || s->elemsize > bytes)
		return bad_span(r, s, "not a span a Go runtime makes");
	if (s->nelems > bytes / s->elemsize)
		return bad_span(r, s, "more elements than fit");
	if ((s->mem = core_ptr(&r->img, s->base, bytes)))
		held = bytes;
	else
		held = core_held(&r->img, s->base, bytes);
	if (!held) { /* a dumper that cut a mapping short: its objects are only counted */
		w->missing_span_bytes += bytes;
		if (w->missing_span_bytes / MISSING_RATIO > r->img.held)
			return bad_span(r, s, "the in-use spans the core lacks up to this one take "
					"more than " MISSING_RATIO_TEXT " times the memory it holds (a "
					"corrupt core?)");
		return HR_OK;
	}
	/* in-use spans do not overlap: together they fit in the core (else one is listed
	 * many times, and its objects would be read, or copied, as often) */
	w->span_bytes += bytes; /* bytes <= 2^40, at most 2^32 spans: no overflow */
	if (w->span_bytes > r->img.held)
		return bad_span(r, s, "the in-use spans up to this one take more than the memory "
				"in the core (a corrupt core?)");
	s->part_missing = held < bytes;
	if (!s->mem) /* in pieces of the file (mappings the kernel did not merge), or only
		      * partly in it: copied */
		s->mem = span_copy(r, s, bytes);
	return s->mem ? HR_OK : r->err->code;
}

/* --- pointer bits: Go 1.22+ ------------------------------------------------------------ */

static struct type_mask *type_slot(struct heap_walk *w, uint64_t addr)
{
	size_t i = (size_t)((addr >> 3) * UINT64_C(0x9E3779B97F4A7C15) >> 32) & (w->types_cap - 1);

	while (w->types[i].addr && w->types[i].addr != addr)
		i = (i + 1) & (w->types_cap - 1);
	return &w->types[i];
}

static int grow_types(struct heap_walk *w)
{
	struct type_mask *old = w->types;
	size_t old_cap = w->types_cap;

	w->types_cap = old_cap ? old_cap * 2 : 256;
	w->types = calloc(w->types_cap, sizeof(*w->types));
	if (!w->types) {
		w->types = old;
		w->types_cap = old_cap;
		return HR_ENOMEM;
	}
	for (size_t i = 0; i < old_cap; i++)
		if (old[i].addr)
			*type_slot(w, old[i].addr) = old[i];
	free(old);
	return HR_OK;
}

/* Reads the type at addr: size, pointer bytes and mask (limit: the bytes that matter). */
static int load_type(struct heap_walk *w, uint64_t addr, uint64_t limit, struct type_mask *t)
{
	struct core_reader *r = w->r;
	const struct rt_layout *L = &r->L;
	uint64_t gcdata, nbytes;

	t->addr = addr;
	t->size = cr_field(r, addr, &L->t_size, "type size");
	t->ptrbytes = cr_field(r, addr, &L->t_ptrbytes, "type pointer bytes");
	gcdata = cr_field(r, addr, &L->t_gcdata, "type GC data");
	if ((cr_field(r, addr, &L->t_tflag, "type flags") & TFLAG_GCMASK_ON_DEMAND) &&
	    r->go_minor >= 24)
		gcdata = cr_word(r, gcdata, "on-demand GC mask"); /* 0: never built */
	if (r->failed)
		return HR_EINPUT;
	/* A type's pointers lie within it; a corrupt one claiming more would have the mask
	 * of each element overlap the next ones', and typed_bits() take time quadratic in
	 * the object's size. */
	if (t->ptrbytes > t->size)
		t->ptrbytes = t->size;
	if (t->ptrbytes > limit)
		t->ptrbytes = limit;
	if (!t->ptrbytes || !gcdata) {
		if (t->ptrbytes)
			t->size = 0; /* no mask to read: see unbuilt_masks */
		t->ptrbytes = gcdata ? 0 : t->ptrbytes;
		return HR_OK;
	}
	nbytes = (t->ptrbytes / r->ps + 7) / 8;
	t->mask = malloc(nbytes);
	if (!t->mask)
		return HR_ENOMEM;
	if (core_read(&r->img, gcdata, t->mask, nbytes)) {
		r->failed = true;
		r->bad_addr = gcdata;
		r->bad_what = "a type's GC mask";
		return HR_EINPUT;
	}
	return HR_OK;
}

static const struct type_mask *type_of(struct heap_walk *w, uint64_t addr, uint64_t limit)
{
	struct type_mask *t;

	if ((w->ntypes + 1) * 2 > w->types_cap && grow_types(w))
		return NULL;
	t = type_slot(w, addr);
	if (t->addr)
		return t;
	if (load_type(w, addr, limit, t)) {
		free(t->mask);
		t->addr = 0;
		t->mask = NULL;
		return NULL;
	}
	w->ntypes++;
	return t;
}

/* The words of [from, limit) the type at type_addr, repeated from `from`, says are pointers. */
static int typed_bits(struct heap_walk *w, uint64_t type_addr, uint64_t from, uint64_t limit)
{
	struct core_reader *r = w->r;
	const struct type_mask *t;
	int rc = HR_OK;

	if (!type_addr) { /* no type yet: allocated, not yet written; the runtime scans nothing */
		w->unwritten_objects++;
		w->unwritten_bytes += limit - from + r->ps;
		return HR_OK;
	}
	t = type_of(w, type_addr, limit - from);
	if (!t)
		return r->failed ? cr_fail_report(r) : hr_error_set(r->err, HR_ENOMEM, "out of memory");
	if (!t->mask) {
		w->unbuilt_masks += t->ptrbytes != 0;
		return HR_OK;
	}
	for (uint64_t e = from; e < limit && !rc; e += t->size) {
		for (uint64_t i = 0; i < t->ptrbytes / r->ps && e + i * r->ps < limit && !rc; i++)
			if (t->mask[i / 8] >> (i % 8) & 1)
				rc = hr_dump_build_ptr(r->model, e + i * r->ps, r->err);
		if (!t->size)
			break;
	}
	return rc;
}

/* Small objects of Go 1.22+: the span's heap bits, one per word, at its end. */
static int span_bits(struct heap_walk *w, const struct span *s, uint64_t addr, uint64_t size)
{
	struct core_reader *r = w->r;
	bool any = false;
	uint64_t span_bytes = s->npages * PAGE_SIZE_GO;
	uint64_t hb = span_bytes - span_bytes / r->ps / 8;
	uint64_t first = (addr - s->base) / r->ps, n = size / r->ps;
	int rc = HR_OK;

	if (r->L.inline_mark_bits && s->elemsize >= 16)
		hb -= r->L.inline_mark_bits < hb ? r->L.inline_mark_bits : hb;
	for (uint64_t i = 0; i < n && !rc; i++) {
		uint64_t word = first + i;
		uint64_t bits = le_uint(s->mem + hb + word / 64 * 8, 8);

		if (bits >> (word % 64) & 1) {
			any = true;
			rc = hr_dump_build_ptr(r->model, addr + i * r->ps, r->err);
		}
	}
	if (!any) { /* a type with pointers (a scan span) and no bit: not written yet */
		w->unwritten_objects++;
		w->unwritten_bytes += size;
	}
	return rc;
}

static int object_bits_122(struct heap_walk *w, const struct span *s, uint64_t addr)
{
	struct core_reader *r = w->r;
	uint64_t limit = addr + s->elemsize;

	if (s->elemsize <= 8 * r->ps * r->ps) /* minSizeForMallocHeader */
		return span_bits(w, s, addr, s->elemsize);
	if (s->spanclass >> 1) /* a size class: the type is in the malloc header */
		return typed_bits(w, le_uint(s->mem + (addr - s->base), r->ps), addr + r->ps, limit);
	return typed_bits(w, cr_field(r, s->addr, &r->L.s_large_type, "mspan.largeType"), addr,
			  limit);
}

/* --- pointer bits: Go 1.19-1.21, the arena bitmaps ----------------------------------- */

/* The heapArena holding addr, 0 if none. */
static uint64_t arena_of(struct core_reader *r, uint64_t addr)
{
	const struct rt_layout *L = &r->L;
	uint64_t off = r->img.machine == EM_X86_64 ? AMD64_ARENA_BASE_OFFSET : 0;
	uint64_t ai = (addr - off) / L->arena_bytes;
	uint64_t l1 = L->arena_l2 ? ai / L->arena_l2 : 0, l2 = L->arena_l2 ? ai % L->arena_l2 : 0;
	uint64_t table;

	if (l1 >= L->arena_l1)
		return 0;
	table = cr_word(r, r->L.mheap + L->h_arenas.off + l1 * r->ps, "mheap_.arenas");
	return table ? cr_word(r, table + l2 * r->ps, "mheap_.arenas[]") : 0;
}

static int arena_bits_1bit(struct core_reader *r, uint64_t addr, uint64_t size)
{
	const struct rt_layout *L = &r->L;
	uint64_t arena_words = L->arena_bytes / r->ps, cur = addr, left = size / r->ps;
	int rc = HR_OK;

	while (left && !rc) {
		uint64_t ha = arena_of(r, cur), word = cur / r->ps % arena_words;
		uint64_t idx = word / 64, off = word % 64, valid = 64 - off, mask;

		if (!ha)
			return cr_fail_report(r);
		mask = cr_word(r, ha + L->a_bitmap.off + idx * 8, "heapArena.bitmap") >> off;
		if (left < valid) {
			mask &= (UINT64_C(1) << left) - 1;
			valid = left;
		}
		for (uint64_t i = 0; i < valid && !rc; i++)
			if (mask >> i & 1)
				rc = hr_dump_build_ptr(r->model, cur + i * r->ps, r->err);
		if (left > valid && (cr_uint(r, ha + L->a_no_more_ptrs.off + idx / 8, 1,
					     "heapArena.noMorePtrs") >> (idx % 8) & 1))
			break;
		cur += valid * r->ps;
		left -= valid;
	}
	return r->failed ? cr_fail_report(r) : rc;
}

static int arena_bits_2bit(struct core_reader *r, uint64_t addr, uint64_t size)
{
	const struct rt_layout *L = &r->L;
	uint64_t arena_bytes_of_bitmap = L->arena_bytes / r->ps / 4, ha = 0;
	int rc = HR_OK;

	for (uint64_t i = 0; i < size / r->ps && !rc; i++) {
		uint64_t a = addr + i * r->ps, bits;

		if (!ha || a % L->arena_bytes < r->ps)
			ha = arena_of(r, a);
		if (!ha)
			return cr_fail_report(r);
		bits = cr_uint(r, ha + L->a_bitmap.off + a / r->ps / 4 % arena_bytes_of_bitmap, 1,
			       "heapArena.bitmap") >> (a / r->ps & 3);
		if (!(bits & 0x10)) /* no more pointers in this object */
			break;
		if (bits & 1)
			rc = hr_dump_build_ptr(r->model, a, r->err);
	}
	return r->failed ? cr_fail_report(r) : rc;
}

/* --- objects -------------------------------------------------------------------------- */

static int object_bits(struct heap_walk *w, const struct span *s, uint64_t addr)
{
	struct core_reader *r = w->r;

	if (s->spanclass & 1) /* noscan */
		return HR_OK;
	switch (r->L.bitmap_bits_per_word) {
	case 0:
		return object_bits_122(w, s, addr);
	case 1:
		return arena_bits_1bit(r, addr, s->elemsize);
	default:
		return arena_bits_2bit(r, addr, s->elemsize);
	}
}

static int read_alloc_bits(struct heap_walk *w, const struct span *s)
{
	size_t n = (size_t)(s->nelems + 7) / 8;

	if (n && core_held(&w->r->img, s->alloc_bits, n) < n) /* before n bytes are allocated */
		return bad_span(w->r, s, "its alloc bits are not in the core");
	if (n > w->alloc_cap) {
		uint8_t *p = realloc(w->alloc, n);

		if (!p)
			return hr_error_set(w->r->err, HR_ENOMEM, "out of memory");
		w->alloc = p;
		w->alloc_cap = n;
	}
	if (n && core_read(&w->r->img, s->alloc_bits, w->alloc, n))
		return bad_span(w->r, s, "its alloc bits are not in the core");
	return HR_OK;
}

/* A span the core holds none of: its allocated slots counted, eight at a time. */
static void count_missing(struct heap_walk *w, const struct span *s)
{
	uint64_t n = s->free_scan < s->nelems ? s->free_scan : s->nelems;

	for (uint64_t i = n; i < s->nelems;) {
		if (i % 8 == 0 && s->nelems - i >= 8) {
			n += (uint64_t)__builtin_popcount(w->alloc[i / 8]);
			i += 8;
			continue;
		}
		n += w->alloc[i / 8] >> (i % 8) & 1;
		i++;
	}
	w->missing_objects += n;
	w->missing_bytes += n * s->elemsize;
}

static int span_objects(struct heap_walk *w, const struct span *s)
{
	struct core_reader *r = w->r;
	int rc = read_alloc_bits(w, s);

	if (!rc && !s->mem) {
		count_missing(w, s);
		return HR_OK;
	}
	for (uint64_t i = 0; i < s->nelems && !rc; i++) {
		uint64_t addr = s->base + i * s->elemsize;

		if (i >= s->free_scan && !(w->alloc[i / 8] >> (i % 8) & 1))
			continue;
		if (s->part_missing && core_held(&r->img, addr, s->elemsize) < s->elemsize) {
			w->missing_objects++;
			w->missing_bytes += s->elemsize;
		}
		rc = hr_dump_build_object(r->model, addr, s->elemsize, s->mem + (addr - s->base),
					  r->err);
		if (!rc)
			rc = object_bits(w, s, addr);
	}
	if (!rc && s->nelems) {
		r->heap_lo = r->heap_lo && r->heap_lo < s->base ? r->heap_lo : s->base;
		if (s->base + s->npages * PAGE_SIZE_GO > r->heap_hi)
			r->heap_hi = s->base + s->npages * PAGE_SIZE_GO;
	}
	return rc;
}

static void heap_walk_release(struct heap_walk *w)
{
	for (size_t i = 0; i < w->types_cap; i++)
		free(w->types[i].mask);
	free(w->types);
	free(w->alloc);
}

int core_read_heap(struct core_reader *r)
{
	const struct rt_layout *L = &r->L;
	struct heap_walk w = { .r = r };
	uint64_t spans = cr_word(r, L->mheap + L->h_allspans.off, "mheap_.allspans");
	uint64_t n = cr_word(r, L->mheap + L->h_allspans.off + r->ps, "mheap_.allspans");
	int rc = HR_OK;

	if (r->failed)
		return cr_fail_report(r);
	if ((rc = core_check_count(r, "mheap_.allspans", n,
				   L->mspan_size > r->ps ? L->mspan_size : r->ps)))
		return rc;
	core_specials_begin(r, &w.specials);
	for (uint64_t i = 0; i < n && !rc; i++) {
		struct span s = { 0 };
		uint64_t addr = cr_word(r, spans + i * r->ps, "mheap_.allspans[]");

		if (r->failed) {
			rc = cr_fail_report(r);
			break;
		}
		if (!addr || !read_span(&w, addr, &s)) {
			rc = r->failed ? cr_fail_report(r) : HR_OK;
			continue;
		}
		rc = check_span(&w, &s);
		if (!rc)
			rc = span_objects(&w, &s);
		if (!rc) /* registered finalizers, in the order a dump lists them */
			rc = core_span_specials(r, &w.specials, s.addr, s.base);
	}
	r->unbuilt_masks = w.unbuilt_masks;
	r->missing_objects = w.missing_objects;
	r->missing_bytes = w.missing_bytes;
	r->unwritten_objects = w.unwritten_objects;
	r->unwritten_bytes = w.unwritten_bytes;
	if (!rc && !w.span_bytes && w.missing_objects) /* nothing of the heap at all */
		rc = hr_error_set(r->err, HR_EINPUT, "%s: the heap's memory is not in the core (a "
				  "core written without anonymous memory? see docs/cores.md)",
				  r->img.path);
	heap_walk_release(&w);
	return rc;
}
