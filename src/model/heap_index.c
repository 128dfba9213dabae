/* SPDX-License-Identifier: Apache-2.0 */
/*
 * heap_index.c - the heap object index: objects sorted by address, a sparse page table
 * for address -> object lookups, and one pointer bit per heap word.
 * See model_internal.h for the layout and why it is shaped this way.
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "model_internal.h"

#define PAGE_HASH_MULT UINT64_C(0x9E3779B97F4A7C15)

static size_t page_slot(const struct heap_index *idx, uint64_t page_no)
{
	return (size_t)((page_no * PAGE_HASH_MULT) >> 20) & (idx->page_slots - 1);
}

static struct heap_page *page_find(const struct heap_index *idx, uint64_t page_no)
{
	size_t i;

	if (idx->page_direct) {
		if (page_no - idx->page_lo >= idx->page_slots)
			return NULL;
		i = (size_t)(page_no - idx->page_lo);
		return idx->pages[i].page_no == page_no ? &idx->pages[i] : NULL;
	}
	i = page_slot(idx, page_no);

	for (;;) {
		struct heap_page *p = &idx->pages[i];

		if (p->page_no == page_no)
			return p;
		if (p->page_no == HEAP_NO_PAGE)
			return NULL;
		i = (i + 1) & (idx->page_slots - 1);
	}
}

/*
 * Asks for transparent huge pages over the whole 2 MiB pages inside [p, p + bytes), to
 * be used as they are first touched. The object array, page table and pointer bits are
 * read at random by the scan: with 4 KiB pages nearly every read there also misses the
 * TLB. (The mapped dump gets huge pages from the page cache where the kernel has them.)
 */
static void advise_huge(void *p, size_t bytes)
{
	const uintptr_t huge = (uintptr_t)2 << 20;
	uintptr_t from = ((uintptr_t)p + huge - 1) & ~(huge - 1);
	uintptr_t to = ((uintptr_t)p + bytes) & ~(huge - 1);

	if (p && to > from)
		madvise((void *)from, to - from, MADV_HUGEPAGE); /* a hint: failure is fine */
}

static struct heap_page *alloc_page_table(size_t slots)
{
	struct heap_page *pages = malloc(slots * sizeof(*pages));
	size_t i;

	if (!pages)
		return NULL;
	advise_huge(pages, slots * sizeof(*pages));
	for (i = 0; i < slots; i++)
		pages[i] = (struct heap_page){ .page_no = HEAP_NO_PAGE };
	return pages;
}

static int grow_page_table(struct heap_index *idx)
{
	struct heap_page *old = idx->pages;
	size_t old_slots = idx->page_slots, i;
	struct heap_page *pages;

	if (old_slots > SIZE_MAX / 2 / sizeof(*pages))
		return HR_ENOMEM;
	pages = alloc_page_table(old_slots * 2);
	if (!pages)
		return HR_ENOMEM;
	idx->pages = pages;
	idx->page_slots = old_slots * 2;
	for (i = 0; i < old_slots; i++) {
		size_t j;

		if (old[i].page_no == HEAP_NO_PAGE)
			continue;
		j = page_slot(idx, old[i].page_no);
		while (pages[j].page_no != HEAP_NO_PAGE)
			j = (j + 1) & (idx->page_slots - 1);
		pages[j] = old[i];
	}
	free(old);
	idx->cached = NULL;
	idx->added = NULL;
	return HR_OK;
}

/* Makes pages[0, slots) the direct table of pages page_lo on (it must be). */
static void use_direct_table(struct heap_index *idx, struct heap_page *pages, size_t slots,
			     uint64_t lo)
{
	free(idx->pages);
	idx->pages = pages;
	idx->page_slots = slots;
	idx->page_lo = lo;
	idx->page_direct = true;
	idx->cached = NULL;
	idx->added = NULL;
}

void heap_index_plan_pages(struct heap_index *idx, uint64_t start, uint64_t end,
			   uint64_t file_bytes)
{
	uint64_t lo = start >> HEAP_PAGE_SHIFT, slots;
	struct heap_page *pages;

	if (end <= start || idx->page_used)
		return;
	slots = ((end - 1) >> HEAP_PAGE_SHIFT) - lo + 1;
	if (slots > file_bytes / PLAN_FILE_BYTES_PER_PAGE || !(pages = alloc_page_table(slots)))
		return; /* the hash: its size follows the pages in use */
	use_direct_table(idx, pages, (size_t)slots, lo);
}

/* Lays the page table out as a direct array if that is no larger (model_internal.h). */
static void page_table_direct(struct heap_index *idx)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	struct heap_page *pages;
	size_t i;

	if (idx->page_direct) /* planned so: heap_index_plan_pages() */
		return;
	for (i = 0; i < idx->page_slots; i++) {
		uint64_t page_no = idx->pages[i].page_no;

		if (page_no == HEAP_NO_PAGE)
			continue;
		lo = page_no < lo ? page_no : lo;
		hi = page_no > hi ? page_no : hi;
	}
	if (lo > hi || hi - lo >= idx->page_slots)
		return;
	pages = alloc_page_table((size_t)(hi - lo + 1));
	if (!pages)
		return; /* the hash still works */
	for (i = 0; i < idx->page_slots; i++)
		if (idx->pages[i].page_no != HEAP_NO_PAGE)
			pages[idx->pages[i].page_no - lo] = idx->pages[i];
	use_direct_table(idx, pages, (size_t)(hi - lo + 1), lo);
}

/* Finds or creates the entry of page_no (in the hash: before heap_index_finish()). */
static int page_get(struct heap_index *idx, uint64_t page_no, struct heap_page **out)
{
	size_t i;
	int rc;

	if (idx->page_direct) { /* the reader keeps objects inside the planned range */
		if (page_no - idx->page_lo >= idx->page_slots)
			return HR_EINPUT;
		i = (size_t)(page_no - idx->page_lo);
		if (idx->pages[i].page_no == HEAP_NO_PAGE) {
			idx->pages[i].page_no = page_no;
			idx->page_used++;
		}
		*out = &idx->pages[i];
		return HR_OK;
	}
	if ((idx->page_used + 1) * 2 > idx->page_slots) {
		rc = grow_page_table(idx);
		if (rc)
			return rc;
	}
	i = page_slot(idx, page_no);
	while (idx->pages[i].page_no != page_no) {
		if (idx->pages[i].page_no == HEAP_NO_PAGE) {
			idx->pages[i].page_no = page_no;
			idx->page_used++;
			break;
		}
		i = (i + 1) & (idx->page_slots - 1);
	}
	*out = &idx->pages[i];
	return HR_OK;
}

int heap_index_init(struct heap_index *idx, uint32_t ptr_size)
{
	memset(idx, 0, sizeof(*idx));
	idx->ptr_size = ptr_size;
	idx->ptr_shift = (uint32_t)__builtin_ctz(ptr_size);
	idx->block_words = (uint32_t)hr_bit_words(HEAP_PAGE_SIZE / ptr_size);
	idx->page_slots = 1024;
	idx->pages = alloc_page_table(idx->page_slots);
	return idx->pages ? HR_OK : HR_ENOMEM;
}

/*
 * Reading chunks are mapped, not malloc()ed, so that freeing them as they are copied
 * gives the memory back: glibc raises its mmap threshold each time it frees a mapped
 * block (the page table as it grows), after which it serves 1 MiB from the brk heap,
 * where freed chunks stay resident.
 */
static uint32_t *map_ents(size_t n)
{
	void *p = mmap(NULL, n * sizeof(uint32_t), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void unmap_ents(uint32_t *ents, size_t n)
{
	if (ents)
		munmap(ents, n * sizeof(*ents));
}

void heap_index_release(struct heap_index *idx)
{
	free(idx->pages);
	free(idx->bit_pool);
	free(idx->map_pool);
	for (size_t i = 0; i < idx->nchunks; i++)
		unmap_ents(idx->chunks[i].ents, ENT_CHUNK);
	free(idx->chunks);
	unmap_ents(idx->ents, idx->ents ? idx->nobj : 0);
	free(idx->wholes);
	free(idx->metas);
	free(idx->runs);
	free(idx->order);
	free(idx->dir);
	memset(idx, 0, sizeof(*idx));
}

/* Appends entry e after all others; NULL-safe chunks, HR_ENOMEM if no room. */
static int append_ent(struct heap_index *idx, uint32_t e)
{
	struct ent_chunk *last = idx->nchunks ? &idx->chunks[idx->nchunks - 1] : NULL;

	if (!last || last->n == ENT_CHUNK) {
		last = hr_array_push((void **)&idx->chunks, &idx->nchunks, &idx->chunks_cap,
				     sizeof(*last));
		if (!last)
			return HR_ENOMEM;
		last->ents = map_ents(ENT_CHUNK);
		if (!last->ents) {
			idx->nchunks--;
			return HR_ENOMEM;
		}
	}
	last->ents[last->n++] = e;
	idx->nents++;
	return HR_OK;
}

/* Entry pos while reading: in chunk pos / ENT_CHUNK (see absorb_ents() for short ones). */
static uint32_t chunk_ent(const struct heap_index *idx, size_t pos)
{
	return idx->chunks[pos >> ENT_CHUNK_SHIFT].ents[pos & (ENT_CHUNK - 1)];
}

static int add_whole(struct heap_index *idx, uint64_t addr, uint64_t size, uint64_t off)
{
	struct heap_whole *w = hr_array_push((void **)&idx->wholes, &idx->nwhole,
					     &idx->whole_cap, sizeof(*w));

	if (!w)
		return HR_ENOMEM;
	*w = (struct heap_whole){ addr, size, off };
	return HR_OK;
}

/* Makes p's run start at the next entry, its objects of size bytes from contents at base. */
static int new_run(struct heap_index *idx, struct heap_page *p, uint64_t base, uint64_t size)
{
	struct heap_run *m = hr_array_push((void **)&idx->metas, &idx->nmeta, &idx->meta_cap,
					   sizeof(*m));

	if (!m || idx->nmeta > UINT32_MAX)
		return HR_ENOMEM;
	*m = (struct heap_run){ .base = base, .size = size };
	p->meta = (uint32_t)(idx->nmeta - 1);
	p->pos = (uint32_t)idx->nents;
	return HR_OK;
}

/*
 * Adds an object starting in page p: to p's run if it goes on from the last entry read
 * (one size, rising addresses, contents close after the run's first), as a new run if
 * p has none, else whole.
 */
static int add_to_page(struct heap_index *idx, struct heap_page *p, uint64_t addr,
		       uint64_t size, uint64_t off)
{
	uint32_t in_page = (uint32_t)(addr & (HEAP_PAGE_SIZE - 1));
	const struct heap_run *m = p->run ? &idx->metas[p->meta] : NULL;
	int rc;

	if (m && (size_t)p->pos + p->run == idx->nents && size == m->size &&
	    in_page > idx->last_off && off >= m->base && off - m->base <= ENT_DELTA_MAX) {
		rc = append_ent(idx, in_page << ENT_DELTA_BITS | (uint32_t)(off - m->base));
		p->run += !rc;
	} else if (!m && idx->nents < UINT32_MAX) {
		rc = new_run(idx, p, off, size);
		if (!rc)
			rc = append_ent(idx, in_page << ENT_DELTA_BITS);
		p->run = !rc;
	} else {
		return add_whole(idx, addr, size, off);
	}
	if (!rc)
		idx->last_off = in_page;
	return rc;
}

int heap_index_add(struct heap_index *idx, uint64_t addr, uint64_t size,
		   const uint8_t *contents)
{
	uint64_t page = addr >> HEAP_PAGE_SHIFT, last = (addr + size - 1) >> HEAP_PAGE_SHIFT;
	struct heap_page *p = idx->added;
	int rc;

	if (page != last || !p || p->page_no != page) { /* else the page of the object before */
		for (; page <= last; page++) {
			rc = page_get(idx, page, &idx->added);
			if (rc)
				return rc;
		}
		p = page_find(idx, addr >> HEAP_PAGE_SHIFT); /* the table may have grown */
	}
	idx->nobj++;
	idx->total_bytes += size;
	if (idx->nobj > UINT32_MAX - 1) /* heap_index_finish() refuses so many: counted only */
		return HR_OK;
	p->count++; /* objects starting in it */
	return add_to_page(idx, p, addr, size, (uint64_t)(uintptr_t)contents);
}

static uint64_t *page_bits(struct heap_index *idx, struct heap_page *p)
{
	if (!p->bits) {
		size_t words;

		if (idx->bit_blocks >= UINT32_MAX - 1)
			return NULL;
		size_t cap = idx->bit_cap;

		if (hr_array_reserve((void **)&idx->bit_pool, &idx->bit_cap, idx->bit_blocks + 1,
				     (size_t)idx->block_words * sizeof(uint64_t)))
			return NULL;
		if (idx->bit_cap != cap)
			advise_huge(idx->bit_pool, idx->bit_cap * idx->block_words * sizeof(uint64_t));
		words = idx->bit_blocks * idx->block_words;
		memset(idx->bit_pool + words, 0, idx->block_words * sizeof(uint64_t));
		p->bits = (uint32_t)++idx->bit_blocks;
	}
	return idx->bit_pool + (size_t)(p->bits - 1) * idx->block_words;
}

int heap_index_set_ptr(struct heap_index *idx, uint64_t addr)
{
	uint64_t page_no = addr >> HEAP_PAGE_SHIFT;
	struct heap_page *p = idx->cached;
	uint64_t *bits;

	if (!p || p->page_no != page_no) {
		p = page_find(idx, page_no); /* heap_index_add() created it */
		if (!p)
			return HR_EUSAGE;
		idx->cached = p;
	}
	bits = page_bits(idx, p);
	if (!bits)
		return HR_ENOMEM;
	hr_bit_set(bits, (addr & (HEAP_PAGE_SIZE - 1)) >> idx->ptr_shift);
	return HR_OK;
}

/* Room for `blocks` bit blocks, no more: doubling two pools' worth would waste most of one. */
static int reserve_bits_exactly(struct heap_index *idx, size_t blocks)
{
	size_t bytes = blocks * idx->block_words * sizeof(uint64_t);
	uint64_t *pool;

	if (blocks <= idx->bit_cap)
		return HR_OK;
	pool = realloc(idx->bit_pool, bytes);
	if (!pool)
		return HR_ENOMEM;
	advise_huge(pool, bytes);
	idx->bit_pool = pool;
	idx->bit_cap = blocks;
	return HR_OK;
}

/* Adds the objects of page p's run (meta m) in src's chunks to dst's wholes. */
static int run_whole(struct heap_index *dst, const struct heap_index *src,
		     const struct heap_page *p, const struct heap_run *m)
{
	for (uint32_t k = 0; k < p->run; k++) {
		uint32_t e = chunk_ent(src, (size_t)p->pos + k);

		if (add_whole(dst, p->page_no << HEAP_PAGE_SHIFT | e >> ENT_DELTA_BITS, m->size,
			      m->base + (e & ENT_DELTA_MAX)))
			return HR_ENOMEM;
	}
	return HR_OK;
}

/*
 * Gives dst's page of src's page p its objects and pointer bits: src's run, its entries
 * moved by ent_base, unless dst's page has a run of its own (the page of a span cut by
 * the split): then src's run goes whole; src's bit block, moved by block_base.
 */
static int absorb_page(struct heap_index *dst, const struct heap_index *src,
		       const struct heap_page *p, size_t block_base, size_t ent_base)
{
	struct heap_page *q;
	int rc = page_get(dst, p->page_no, &q);

	if (rc)
		return rc;
	q->count += p->count;
	if (p->run && !q->run) {
		const struct heap_run *m = &src->metas[p->meta];

		if (new_run(dst, q, m->base, m->size))
			return HR_ENOMEM;
		q->run = p->run;
		q->pos = (uint32_t)(ent_base + p->pos); /* < nobj: both halves' fit in 32 bits */
	} else if (p->run && run_whole(dst, src, p, &src->metas[p->meta])) {
		return HR_ENOMEM;
	}
	if (!p->bits)
		return HR_OK;
	if (!q->bits) {
		q->bits = (uint32_t)(block_base + p->bits);
		return HR_OK;
	}
	/* the page of a span cut by the split: both have bits; its block from src is left
	 * unused in the pool, and cleared (hr_dump_heap_ptr_words() counts the whole pool) */
	uint64_t *to = dst->bit_pool + (size_t)(q->bits - 1) * dst->block_words;
	uint64_t *from = dst->bit_pool + (block_base + p->bits - 1) * dst->block_words;

	for (size_t w = 0; w < dst->block_words; w++) {
		to[w] |= from[w];
		from[w] = 0;
	}
	return HR_OK;
}

/*
 * Appends src's entries to dst's, from ent_base on: the start of the chunk after dst's
 * last, which is left short (entries are found by position, and none points there).
 * src's chunks become dst's as they are: no entry is copied and no memory is new
 * (mixed-4g's second half has 82 MB of them).
 */
static int absorb_ents(struct heap_index *dst, struct heap_index *src, size_t ent_base)
{
	if (!src->nchunks)
		return HR_OK;
	if (hr_array_reserve((void **)&dst->chunks, &dst->chunks_cap, dst->nchunks + src->nchunks,
			     sizeof(*dst->chunks)))
		return HR_ENOMEM;
	memcpy(dst->chunks + dst->nchunks, src->chunks, src->nchunks * sizeof(*src->chunks));
	dst->nchunks += src->nchunks;
	dst->nents = ent_base + src->nents;
	src->nchunks = 0; /* dst's now */
	return HR_OK;
}

int heap_index_absorb(struct heap_index *dst, struct heap_index *src)
{
	size_t base = dst->bit_blocks, i;
	size_t ent_base = src->nents ? (dst->nents + ENT_CHUNK - 1) & ~(size_t)(ENT_CHUNK - 1)
				     : dst->nents;
	int rc;

	/* heap_index_finish() refuses so many (positions are 32-bit: within a chunk of the
	 * limit, counted as over it) */
	if (dst->nobj + src->nobj > UINT32_MAX - 1 || ent_base + src->nents > UINT32_MAX - 1) {
		dst->nobj = dst->nobj + src->nobj > UINT32_MAX ? dst->nobj + src->nobj : UINT32_MAX;
		heap_index_release(src);
		return HR_OK;
	}
	if (dst->bit_blocks + src->bit_blocks >= UINT32_MAX - 1 ||
	    reserve_bits_exactly(dst, base + src->bit_blocks))
		return HR_ENOMEM;
	/* each copy only when there is something: the arrays of an empty half are NULL */
	if (src->bit_blocks)
		memcpy(dst->bit_pool + base * dst->block_words, src->bit_pool,
		       src->bit_blocks * src->block_words * sizeof(uint64_t));
	dst->bit_blocks += src->bit_blocks;
	for (i = 0; i < src->page_slots; i++)
		if (src->pages[i].page_no != HEAP_NO_PAGE &&
		    (rc = absorb_page(dst, src, &src->pages[i], base, ent_base)))
			return rc;
	if (hr_array_reserve((void **)&dst->wholes, &dst->whole_cap, dst->nwhole + src->nwhole,
			     sizeof(*dst->wholes)) ||
	    absorb_ents(dst, src, ent_base))
		return HR_ENOMEM;
	if (src->nwhole)
		memcpy(dst->wholes + dst->nwhole, src->wholes, src->nwhole * sizeof(*src->wholes));
	dst->nwhole += src->nwhole;
	if (src->nents)
		dst->last_off = src->last_off;
	dst->nobj += src->nobj;
	dst->total_bytes += src->total_bytes;
	dst->added = dst->cached = NULL;
	heap_index_release(src);
	return HR_OK;
}

/* Object k of page p (k < p->count): its span; returns where its contents are. */
static uint64_t page_obj(const struct heap_index *idx, const struct heap_page *p, size_t k,
			 struct heap_span *span)
{
	const struct heap_run *m = &idx->runs[p->pos];
	const struct heap_whole *w;
	uint32_t e;

	if (p->whole) {
		w = &idx->wholes[m->base + k];
		span->addr = w->addr;
		span->size = w->size;
		return w->off;
	}
	e = idx->ents[p->first + k];
	span->addr = p->page_no << HEAP_PAGE_SHIFT | e >> ENT_DELTA_BITS;
	span->size = m->size;
	return m->base + (e & ENT_DELTA_MAX);
}

/* The start of object k of page p. */
static uint64_t page_addr(const struct heap_index *idx, const struct heap_page *p, size_t k)
{
	if (p->whole)
		return idx->wholes[idx->runs[p->pos].base + k].addr;
	return p->page_no << HEAP_PAGE_SHIFT | idx->ents[p->first + k] >> ENT_DELTA_BITS;
}

/* The run of object i's page. */
static const struct heap_run *obj_run(const struct heap_index *idx, size_t i)
{
	const struct heap_dir *d = &idx->dir[i >> HEAP_DIR_SHIFT];

	return &idx->runs[d->rank + heap_popcount(d->starts & (UINT64_MAX >> (63 - (i & 63))))];
}

/* Object i, one the directory block does not cover: by its page's run. */
uint64_t heap_index_object_slow(const struct heap_index *idx, size_t i, struct heap_span *span)
{
	const struct heap_run *m = obj_run(idx, i);
	const struct heap_whole *w;
	uint32_t e;

	if (!m->size) {
		w = &idx->wholes[m->base + i - m->first];
		span->addr = w->addr;
		span->size = w->size;
		return w->off;
	}
	e = idx->ents[i];
	span->addr = m->page_no << HEAP_PAGE_SHIFT | e >> ENT_DELTA_BITS;
	span->size = m->size;
	return m->base + (e & ENT_DELTA_MAX);
}

uint64_t heap_index_obj_size(const struct heap_index *idx, size_t i)
{
	struct heap_span span;

	heap_index_object(idx, i, &span);
	return span.size;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* By address, then by contents: of two at one address in a file, the one read first first. */
static int cmp_whole(const void *a, const void *b)
{
	const struct heap_whole *x = a, *y = b;

	if (x->addr != y->addr)
		return (x->addr > y->addr) - (x->addr < y->addr);
	return (x->off > y->off) - (x->off < y->off);
}

/*
 * Gives each page in use its `first`, and lists the pages objects start in, in address
 * order, in idx->order (their slots in the page table, laid out for good by now).
 */
static int number_pages(struct heap_index *idx)
{
	size_t slots = idx->page_used ? idx->page_used : 1, i, n = 0, next = 0;
	uint64_t *nos = malloc(slots * sizeof(*nos));

	idx->order = malloc(slots * sizeof(*idx->order));
	idx->runs = calloc(slots, sizeof(*idx->runs));
	if (!nos || !idx->order || !idx->runs) {
		free(nos);
		return HR_ENOMEM;
	}
	for (i = 0; i < idx->page_slots; i++)
		if (idx->pages[i].page_no != HEAP_NO_PAGE)
			nos[n++] = idx->pages[i].page_no;
	if (!idx->page_direct) /* a direct table holds them in order */
		qsort(nos, n, sizeof(*nos), cmp_u64);
	for (i = 0; i < n; i++) {
		struct heap_page *p = page_find(idx, nos[i]);

		if (p->run) /* its meta, before `first` takes its place */
			idx->runs[idx->nstart] = idx->metas[p->meta];
		idx->runs[idx->nstart].page_no = p->page_no;
		idx->runs[idx->nstart].first = (uint32_t)next;
		p->first = (uint32_t)next; /* <= nobj < 2^32 */
		next += p->count;
		if (p->count)
			idx->order[idx->nstart++] = (uint32_t)(p - idx->pages);
	}
	free(nos);
	free(idx->metas);
	idx->metas = NULL;
	idx->nmeta = idx->meta_cap = 0;
	return HR_OK;
}

/*
 * Makes each page some of whose objects are whole all whole: its run's objects join the
 * wholes, which are then sorted by address, each such page's objects together.
 */
static int make_whole_pages(struct heap_index *idx)
{
	struct heap_page *p;
	size_t i;

	if (!idx->nwhole)
		return HR_OK;
	for (i = 0; i < idx->nstart; i++) {
		p = &idx->pages[idx->order[i]];
		if (p->run == p->count)
			continue;
		if (run_whole(idx, idx, p, &idx->runs[i]))
			return HR_ENOMEM;
		p->whole = 1;
	}
	qsort(idx->wholes, idx->nwhole, sizeof(*idx->wholes), cmp_whole);
	for (i = 0; i < idx->nwhole; i += p->count) { /* each whole page's objects, in order */
		p = page_find(idx, idx->wholes[i].addr >> HEAP_PAGE_SHIFT);
		p->map = (uint32_t)i; /* its run count is of no more use: place_runs() skips it */
	}
	return HR_OK;
}

/* Where a run starts in the chunks, and the slot of its page. */
struct run_at {
	uint32_t pos;
	uint32_t slot;
};

static int cmp_run_at(const void *a, const void *b)
{
	uint32_t x = ((const struct run_at *)a)->pos, y = ((const struct run_at *)b)->pos;

	return (x > y) - (x < y);
}

/* Copies n entries from the chunks at pos to out. */
static void copy_from_chunks(const struct heap_index *idx, size_t pos, size_t n, uint32_t *out)
{
	while (n > 0) {
		size_t at = pos & (ENT_CHUNK - 1), take = ENT_CHUNK - at < n ? ENT_CHUNK - at : n;

		memcpy(out, idx->chunks[pos >> ENT_CHUNK_SHIFT].ents + at, take * sizeof(*out));
		out += take;
		pos += take;
		n -= take;
	}
}

/* Final entries faulted in by two threads (prefault()): from 32 MB, and only while they
 * are at most 1/16 of the heap's bytes (objects of 64 bytes on average, or more). */
#define PREFAULT_MIN_BYTES ((size_t)32 << 20)
#define PREFAULT_HEAP_SHARE 16
#define FAULT_STRIDE 4096

struct prefault_part {
	volatile uint8_t *p;
	size_t len;
};

static void *touch_pages(void *arg)
{
	struct prefault_part *part = arg;

	for (size_t at = 0; at < part->len; at += FAULT_STRIDE)
		part->p[at] = 0;
	return NULL;
}

/*
 * Makes the first touch of [p, p + len), the final entries of a heap of heap_bytes, on
 * two threads when it is large and there are two processors. A new page costs its
 * zeroing by the kernel, and on this project's VM much more (mixed-4g's 164 MB of
 * final entries: 0.37 s of place_runs() on one core, the other idle). The copy that
 * follows then writes to pages that are there; but the reading chunks it frees as it
 * goes are all still there meanwhile, so the peak grows by len: hence the heap share.
 */
static bool prefault(void *p, size_t len, uint64_t heap_bytes)
{
	struct prefault_part half;
	pthread_t thread;

	if (len < PREFAULT_MIN_BYTES || len > heap_bytes / PREFAULT_HEAP_SHARE ||
	    hr_cpus_usable() < 2) /* also no entries at all: p is NULL */
		return false;
	half = (struct prefault_part){ (uint8_t *)p + len / 2, len - len / 2 };
	if (pthread_create(&thread, NULL, touch_pages, &half))
		return false; /* the copy faults them in */
	touch_pages(&(struct prefault_part){ p, len / 2 });
	pthread_join(thread, NULL);
	return true;
}

/* The runs of the pages of ranks [from, to), copied from the chunks to their places. */
struct place_part {
	struct heap_index *idx;
	size_t from, to;
};

static void *place_part(void *arg)
{
	struct place_part *part = arg;
	struct heap_index *idx = part->idx;

	for (size_t r = part->from; r < part->to; r++) {
		const struct heap_page *p = &idx->pages[idx->order[r]];

		if (!p->whole)
			copy_from_chunks(idx, p->pos, p->count, idx->ents + p->first);
	}
	return NULL;
}

/*
 * Copies the runs in address order, half of the pages on another thread, then unmaps
 * all the chunks: for entries already faulted in (prefault()), where the peak is
 * reached before the copy anyway, this needs no sort of the runs by place in the file
 * and no order between the threads.
 */
static void place_by_rank(struct heap_index *idx)
{
	struct place_part part[2] = { { idx, 0, idx->nstart / 2 },
				      { idx, idx->nstart / 2, idx->nstart } };
	pthread_t thread;

	if (pthread_create(&thread, NULL, place_part, &part[1])) {
		part[0].to = idx->nstart;
		place_part(&part[0]);
	} else {
		place_part(&part[0]);
		pthread_join(thread, NULL);
	}
	for (size_t c = 0; c < idx->nchunks; c++)
		unmap_ents(idx->chunks[c].ents, ENT_CHUNK);
}

/*
 * Runs [from, to) of a list in the order they were read, copied; each of the chunks
 * [unmap_from, unmap_to) unmapped once no run of the list is left in it.
 */
struct file_part {
	struct heap_index *idx;
	const struct run_at *runs;
	size_t from, to;
	size_t unmap_from, unmap_to;
};

static void *place_file_part(void *arg)
{
	const struct file_part *part = arg;
	struct heap_index *idx = part->idx;
	size_t freed = part->unmap_from;

	for (size_t k = part->from; k < part->to; k++) {
		const struct heap_page *p = &idx->pages[part->runs[k].slot];

		for (; freed < part->unmap_to && (freed + 1) << ENT_CHUNK_SHIFT <= p->pos; freed++)
			unmap_ents(idx->chunks[freed].ents, ENT_CHUNK); /* no run left there */
		copy_from_chunks(idx, p->pos, p->count, idx->ents + p->first);
	}
	for (; freed < part->unmap_to; freed++)
		unmap_ents(idx->chunks[freed].ents, ENT_CHUNK);
	return NULL;
}

/*
 * Copies the runs in the order they were read, unmapping each chunk once it is done:
 * the first half of them on another thread when there are two processors and two
 * chunks or more, each half unmapping the chunks only it reads (those both may read,
 * after both are done). The entries' new pages cost their zeroing by the kernel, and on
 * this project's VM much more: small-1g's 66 MB, 0.1-0.14 s of perf's samples on one
 * core, the other idle.
 */
static int place_by_file_order(struct heap_index *idx)
{
	struct run_at *runs = malloc((idx->nstart ? idx->nstart : 1) * sizeof(*runs));
	struct file_part part[2];
	size_t n = 0, half, shared_from, shared_to = 0;
	pthread_t thread;

	if (!runs)
		return HR_ENOMEM;
	for (size_t r = 0; r < idx->nstart; r++)
		if (!idx->pages[idx->order[r]].whole)
			runs[n++] = (struct run_at){ idx->pages[idx->order[r]].pos, idx->order[r] };
	qsort(runs, n, sizeof(*runs), cmp_run_at);
	half = n / 2;
	/* the first half's runs start before the second's first, and may end after it */
	shared_from = half < n ? runs[half].pos >> ENT_CHUNK_SHIFT : idx->nchunks;
	for (size_t k = 0; k < half; k++) {
		const struct heap_page *p = &idx->pages[runs[k].slot];
		size_t end = ((size_t)p->pos + p->count + ENT_CHUNK - 1) >> ENT_CHUNK_SHIFT;

		shared_to = end > shared_to ? end : shared_to;
	}
	if (shared_to < shared_from)
		shared_to = shared_from;
	if (shared_to > idx->nchunks)
		shared_to = idx->nchunks;
	part[0] = (struct file_part){ idx, runs, 0, half, 0, shared_from };
	part[1] = (struct file_part){ idx, runs, half, n, shared_to, idx->nchunks };
	/* (one chunk: not worth a thread, nor a question to the kernel about processors) */
	if (idx->nchunks < 2 || hr_cpus_usable() < 2 ||
	    pthread_create(&thread, NULL, place_file_part, &part[0])) {
		part[0] = (struct file_part){ idx, runs, 0, n, 0, idx->nchunks };
		place_file_part(&part[0]);
	} else {
		place_file_part(&part[1]);
		pthread_join(thread, NULL);
		for (size_t c = shared_from; c < shared_to; c++)
			unmap_ents(idx->chunks[c].ents, ENT_CHUNK);
	}
	free(runs);
	return HR_OK;
}

/*
 * Copies each page's run from the reading chunks to its objects' place in ents (entry i
 * for object i): on two threads when the entries were faulted in first, else in the
 * order they were read, so that each chunk can be unmapped once the runs before it
 * are copied. (Whole pages' places stay 0.)
 */
static int place_runs(struct heap_index *idx)
{
	if (idx->nobj && !(idx->ents = map_ents(idx->nobj)))
		return HR_ENOMEM;
	advise_huge(idx->ents, idx->nobj * sizeof(*idx->ents));
	for (size_t r = 0; r < idx->nstart; r++)
		if (idx->pages[idx->order[r]].whole) /* its first in wholes (make_whole_pages()) */
			idx->runs[r].base = idx->pages[idx->order[r]].map, idx->runs[r].size = 0;
	if (prefault(idx->ents, idx->nobj * sizeof(*idx->ents), idx->total_bytes))
		place_by_rank(idx);
	else if (place_by_file_order(idx))
		return HR_ENOMEM;
	for (size_t r = 0; r < idx->nstart; r++)
		idx->pages[idx->order[r]].pos = (uint32_t)r;
	free(idx->chunks);
	idx->chunks = NULL;
	idx->nchunks = idx->chunks_cap = 0;
	return HR_OK;
}

/* Sets d's run k to that of page p (of rank r). */
static void dir_run(const struct heap_index *idx, struct heap_dir *d, unsigned k,
		    const struct heap_page *p, size_t r)
{
	if (p->whole)
		d->run[k] = (struct heap_dir_run){ 0 }; /* size 0 */
	else
		d->run[k] = (struct heap_dir_run){ p->page_no, idx->runs[r].base,
						   idx->runs[r].size };
}

/* The directory (see model_internal.h); each page's run count gives way to its map. */
static int build_dir(struct heap_index *idx)
{
	size_t bytes = ((idx->nobj >> HEAP_DIR_SHIFT) + 1) * sizeof(*idx->dir);

	idx->dir = aligned_alloc(sizeof(*idx->dir), bytes); /* a block per cache line */
	if (!idx->dir)
		return HR_ENOMEM;
	memset(idx->dir, 0, bytes);
	advise_huge(idx->dir, bytes);
	for (size_t r = 0; r < idx->nstart; r++) { /* in address order: the last is the tail */
		struct heap_page *p = &idx->pages[idx->order[r]];
		size_t first = p->first, end = first + p->count, b = first >> HEAP_DIR_SHIFT;

		p->map = 0;
		if (first & 63) {
			idx->dir[b].starts |= UINT64_C(1) << (first & 63);
			dir_run(idx, &idx->dir[b], 1, p, r);
		}
		for (b = (first + 63) >> HEAP_DIR_SHIFT; b << HEAP_DIR_SHIFT < end; b++) {
			idx->dir[b].rank = (uint32_t)r;
			dir_run(idx, &idx->dir[b], 0, p, r);
		}
	}
	for (size_t b = 0; b <= idx->nobj >> HEAP_DIR_SHIFT; b++) {
		struct heap_dir *d = &idx->dir[b];

		/* the head's objects end at the first page start, the tail's begin at the last */
		d->head_end = d->starts ? (uint8_t)__builtin_ctzll(d->starts) : 64;
		d->tail_from = d->starts ? (uint8_t)(63 - __builtin_clzll(d->starts)) : 64;
		if (!d->run[0].size)
			d->head_end = 0; /* whole */
		if (!d->run[1].size)
			d->tail_from = 64;
	}
	return HR_OK;
}

/*
 * Builds the slot map of a grid page with free slots: bit k of the map (in words of
 * HEAP_MAP_BITS bits) is set if slot k holds an object, and each word's top 16 bits
 * count the objects in the slots of the words before. False if over budget or no memory.
 */
static bool page_map(struct heap_index *idx, struct heap_page *p, uint32_t stride)
{
	uint32_t slots = (uint32_t)(HEAP_PAGE_SIZE - p->start + stride - 1) / stride;
	size_t words = (slots + HEAP_MAP_BITS - 1) / HEAP_MAP_BITS, w;
	uint64_t *map, base = page_addr(idx, p, 0), before = 0;

	if (words * sizeof(*map) > (size_t)p->count * HEAP_MAP_BYTES_PER_OBJ ||
	    hr_array_reserve((void **)&idx->map_pool, &idx->map_cap, idx->map_words + words,
			     sizeof(*map)))
		return false;
	map = idx->map_pool + idx->map_words;
	memset(map, 0, words * sizeof(*map));
	for (uint32_t i = 0; i < p->count; i++) {
		/* in the page: < 2^13 */
		uint32_t slot = (uint32_t)(page_addr(idx, p, i) - base) / stride;

		map[slot / HEAP_MAP_BITS] |= UINT64_C(1) << (slot % HEAP_MAP_BITS);
	}
	for (w = 0; w < words; w++) {
		uint64_t n = heap_popcount(map[w]);

		map[w] |= before << HEAP_MAP_BITS;
		before += n;
	}
	p->map = (uint32_t)idx->map_words; /* < 2^32: the budget keeps maps under nobj / 4 words */
	idx->map_words += words;
	return true;
}

/*
 * Checks the objects starting in page p against the ones before them (*prev: the
 * object before p's first, then p's last), and records the page's grid (see struct
 * heap_page) if they sit on one. Returns the index of the first of them to overlap the
 * object before it, or 0 if none does.
 */
static size_t page_scan(struct heap_index *idx, struct heap_page *p, struct heap_span *prev)
{
	struct heap_span o;
	uint64_t size = 0;
	bool grid = p->count >= 2, dense = true;

	for (uint32_t k = 0; k < p->count; k++) {
		uint64_t step;

		page_obj(idx, p, k, &o);
		step = o.addr - prev->addr;
		if (p->first + k > 0 && step < prev->size) /* object 0 has none before */
			return (size_t)p->first + k;
		*prev = o;
		if (k == 0) {
			size = o.size;
			grid = grid && size > 0 && size < HEAP_PAGE_SIZE;
		} else if (!grid) {
			continue;
		} else if (o.size != size || (step != size && (uint32_t)step % (uint32_t)size)) {
			grid = false; /* both < 2^13 */
		} else if (step != size) {
			dense = false; /* free slots in between */
		}
	}
	if (!grid)
		return 0;
	p->start = page_addr(idx, p, 0) & (HEAP_PAGE_SIZE - 1);
	p->dense = dense;
	p->stride = (uint32_t)size; /* with free slots, no use until map_grids() maps them */
	return 0;
}

/*
 * Pages in use, or objects, from which scan_pages() takes two threads (mixed-4g: 530,000
 * pages; it reads 2.5 ns an object, 40M in 0.1 s). Pages alone were not enough:
 * small-1g's 16.5M objects start in 61,753 pages, and one thread scanned them in
 * 0.025-0.04 s, the other core idle.
 */
#define SCAN_SPLIT_MIN_PAGES 65536
#define SCAN_SPLIT_MIN_OBJECTS ((size_t)1 << 22)

/* The pages of ranks [from, to) in idx->order, scanned by one thread. */
struct scan_part {
	struct heap_index *idx;
	size_t from, to;
	struct heap_span prev;    /* the object before the first page's first */
	size_t bad;               /* as page_scan() returned for the first page it failed */
};

static void *scan_part(void *arg)
{
	struct scan_part *part = arg;
	struct heap_index *idx = part->idx;

	for (size_t r = part->from; r < part->to && !part->bad; r++)
		part->bad = page_scan(idx, &idx->pages[idx->order[r]], &part->prev);
	return NULL;
}

/*
 * The rank of the first page whose objects start at or after the middle one: halves
 * of the pages can be far from halves of the objects (small-1g's second half of pages
 * was scanned by the other thread while this one scanned nearly all of the objects).
 */
static size_t rank_of_middle_object(const struct heap_index *idx)
{
	size_t lo = 1, hi = idx->nstart - 1; /* each half has a page */

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (idx->pages[idx->order[mid]].first < idx->nobj / 2)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * page_scan() of every page objects start in, in address order: the first object to
 * overlap the one before it, or 0. On two threads when there are many pages or
 * objects, split at the middle object, the second half's first page checked against
 * the first half's last object. (Reading
 * the entries of 40M objects once more took 0.1 s, the other core idle.)
 */
static size_t scan_pages(struct heap_index *idx)
{
	struct scan_part part[2] = { { idx, 0, idx->nstart, { 0, 0 }, 0 },
				     { idx, 0, idx->nstart, { 0, 0 }, 0 } };
	const struct heap_page *before;
	pthread_t thread;
	size_t mid;

	if ((idx->nstart < SCAN_SPLIT_MIN_PAGES && idx->nobj < SCAN_SPLIT_MIN_OBJECTS) ||
	    idx->nstart < 2 || hr_cpus_usable() < 2) {
		scan_part(&part[0]);
		return part[0].bad;
	}
	part[1].from = mid = rank_of_middle_object(idx);
	before = &idx->pages[idx->order[mid - 1]];
	page_obj(idx, before, before->count - 1, &part[1].prev); /* pages in order hold some */
	if (pthread_create(&thread, NULL, scan_part, &part[1])) {
		scan_part(&part[0]);
		return part[0].bad;
	}
	part[0].to = mid;
	scan_part(&part[0]);
	pthread_join(thread, NULL);
	return part[0].bad ? part[0].bad : part[1].bad;
}

/*
 * The slot maps of grid pages with free slots, in address order (so the map pool's
 * layout does not depend on threads); a page over budget, or out of memory, loses its
 * grid and is searched by its entries.
 */
static void map_grids(struct heap_index *idx)
{
	for (size_t r = 0; r < idx->nstart; r++) {
		struct heap_page *p = &idx->pages[idx->order[r]];

		if (p->stride && !p->dense && !page_map(idx, p, p->stride))
			p->stride = 0;
	}
}

int heap_index_finish(struct heap_index *idx, const char *name, const uint8_t *file,
		      size_t file_len, struct hr_error *err)
{
	struct heap_span a, b;
	size_t bad;
	int rc;

	if (idx->nobj > UINT32_MAX - 1)
		return hr_error_set(err, HR_EINPUT, "%s: more than %" PRIu32 " objects", name,
				    UINT32_MAX - 1);
	page_table_direct(idx);
	rc = number_pages(idx);
	if (!rc)
		rc = make_whole_pages(idx);
	if (!rc)
		rc = place_runs(idx);
	if (!rc)
		rc = build_dir(idx);
	if (rc)
		return hr_error_set(err, rc, "%s: out of memory sorting %zu objects", name, idx->nobj);
	bad = scan_pages(idx);
	if (bad) {
		uintptr_t at = (uintptr_t)heap_contents(heap_index_object(idx, bad, &a));

		heap_index_object(idx, bad - 1, &b);
		if (!file || at < (uintptr_t)file || at - (uintptr_t)file >= file_len)
			return hr_error_set(err, HR_EINPUT, "%s: object at 0x%" PRIx64 " overlaps "
					    "the object at 0x%" PRIx64, name, a.addr, b.addr);
		return hr_error_set(err, HR_EINPUT,
				    "%s: byte %" PRIu64 ": object at 0x%" PRIx64
				    " overlaps the object at 0x%" PRIx64,
				    name, (uint64_t)(at - (uintptr_t)file), a.addr, b.addr);
	}
	map_grids(idx);
	return HR_OK;
}

/*
 * On a grid page (p->stride set, off at or past the grid's start): the object of off's
 * slot holds it, if there is one; one before ends at or before the slot, one after
 * starts after it. Its start and size follow from the grid, not from the entries.
 */
static int64_t grid_find(const struct heap_index *idx, const struct heap_page *p, uint64_t addr,
			 uint32_t off, struct heap_span *span)
{
	uint32_t slot = (off - p->start) / p->stride, bit = slot % HEAP_MAP_BITS;
	int64_t i;
	uint64_t w;

	if (p->dense) { /* slots 0 .. count-1 hold objects first .. first+count-1 */
		if (slot >= p->count)
			return -1;
		i = (int64_t)(p->first + slot);
	} else {
		w = idx->map_pool[p->map + slot / HEAP_MAP_BITS];
		if (!(w >> bit & 1))
			return -1; /* a free slot */
		i = (int64_t)(p->first + (w >> HEAP_MAP_BITS) +
			      heap_popcount(w & ((UINT64_C(1) << bit) - 1)));
	}
	span->addr = addr - off + p->start + (uint64_t)slot * p->stride;
	span->size = p->stride;
	return i;
}

int64_t heap_index_find(const struct heap_index *idx, uint64_t addr)
{
	struct heap_span span;

	return heap_index_locate(idx, addr, &span);
}

bool heap_index_span_pointer_free(const struct heap_index *idx, uint64_t addr, uint64_t size)
{
	uint64_t page_no = addr >> HEAP_PAGE_SHIFT;
	const struct heap_page *p;

	if (!size || (addr + size - 1) >> HEAP_PAGE_SHIFT != page_no)
		return false; /* pages enough to look at are not worth it: it may */
	p = page_find(idx, page_no);
	return p && !p->bits;
}

int64_t heap_index_locate(const struct heap_index *idx, uint64_t addr, struct heap_span *span)
{
	const struct heap_page *p = page_find(idx, addr >> HEAP_PAGE_SHIFT);
	uint32_t off = (uint32_t)(addr & (HEAP_PAGE_SIZE - 1));
	size_t lo = 0, hi;
	int64_t cand;

	if (!p)
		return -1;
	if (p->stride && off >= p->start)
		return grid_find(idx, p, addr, off, span);
	hi = p->count;
	if (hi == 0 || page_addr(idx, p, 0) > addr) {
		if (!p->first)
			return -1;
		cand = (int64_t)p->first - 1; /* starts in an earlier page, if anything */
		heap_index_object(idx, (size_t)cand, span);
	} else {
		while (hi - lo > 1) { /* invariant: object lo starts <= addr < object hi */
			size_t mid = lo + (hi - lo) / 2;

			if (page_addr(idx, p, mid) <= addr)
				lo = mid;
			else
				hi = mid;
		}
		cand = (int64_t)(p->first + lo);
		page_obj(idx, p, lo, span);
	}
	return addr - span->addr < span->size ? cand : -1;
}

/* Where page_find() looks first for page_no: the entry itself once the table is direct. */
static const struct heap_page *page_probe(const struct heap_index *idx, uint64_t page_no)
{
	if (idx->page_direct)
		return page_no - idx->page_lo < idx->page_slots ? &idx->pages[page_no - idx->page_lo]
								: NULL;
	return &idx->pages[page_slot(idx, page_no)];
}

/*
 * The page entries of what the first words of an object's contents from offset point
 * to (data: they are in cache by now): the walk looks each target up next. Any word
 * that falls in a page of the heap counts, pointer or not; only a direct page table is
 * worth it (a hash would be probed for every word).
 */
static void prefetch_targets(const struct heap_index *idx, const uint8_t *data, uint64_t size,
			     uint64_t offset)
{
	uint64_t n;

	if (!idx->page_direct || idx->ptr_size != 8 || size <= offset)
		return;
	n = (size - offset) / 8 < 8 ? (size - offset) / 8 : 8;
	for (uint64_t k = 0; k < n; k++) {
		uint64_t v;

		memcpy(&v, data + 8 * k, sizeof(v)); /* host order: a wrong guess costs nothing */
		if ((v >> HEAP_PAGE_SHIFT) - idx->page_lo < idx->page_slots)
			__builtin_prefetch(&idx->pages[(v >> HEAP_PAGE_SHIFT) - idx->page_lo]);
	}
}

void heap_index_prefetch(const struct heap_index *idx, size_t i, uint64_t offset,
			 enum hr_prefetch_stage stage)
{
	const struct heap_page *p;
	const uint8_t *data;
	struct heap_span o;

	/*
	 * GCC counts __builtin_prefetch as no side effect: a function made only of
	 * prefetches is found "const" across units (LTO) and its calls are deleted, which
	 * silently took every prefetch stage but the inlined one out of the Release build.
	 * An empty volatile asm is a side effect the optimizer must keep.
	 */
	__asm__ volatile("");
	switch (stage) {
	case HR_PREFETCH_ENTRY: /* what heap_index_object() reads but for a whole page */
		__builtin_prefetch(&idx->ents[i]);
		__builtin_prefetch(&idx->dir[i >> HEAP_DIR_SHIFT]);
		break;
	case HR_PREFETCH_CONTENTS: {
		uint64_t ahead;

		if (!heap_dir_run_of(idx, i)) { /* its run first; its contents at the next stage */
			__builtin_prefetch(obj_run(idx, i));
			break;
		}
		data = heap_contents(heap_index_object(idx, i, &o)) + offset;
		ahead = o.size > offset ? o.size - offset : 1;
		/* the first and last line of up to 128 bytes: the whole of most objects */
		__builtin_prefetch(data);
		__builtin_prefetch(data + (ahead < 128 ? ahead : 128) - 1);
		__builtin_prefetch(page_probe(idx, o.addr >> HEAP_PAGE_SHIFT));
		break;
	}
	case HR_PREFETCH_BITS:
		data = heap_contents(heap_index_object(idx, i, &o)) + offset;
		if (!heap_dir_run_of(idx, i)) { /* its contents now: too late to read them */
			__builtin_prefetch(data);
			__builtin_prefetch(page_probe(idx, o.addr >> HEAP_PAGE_SHIFT));
			break;
		}
		p = page_probe(idx, o.addr >> HEAP_PAGE_SHIFT);
		if (p && p->page_no == o.addr >> HEAP_PAGE_SHIFT && p->bits)
			__builtin_prefetch(idx->bit_pool + (size_t)(p->bits - 1) * idx->block_words +
					   (o.addr & (HEAP_PAGE_SIZE - 1)) / idx->ptr_size / 64);
		prefetch_targets(idx, data, o.size, offset);
		break;
	}
}

bool heap_index_ptr_bit(const struct heap_index *idx, uint64_t addr)
{
	const struct heap_page *p = page_find(idx, addr >> HEAP_PAGE_SHIFT);

	if (!p || !p->bits)
		return false;
	return hr_bit_get(idx->bit_pool + (size_t)(p->bits - 1) * idx->block_words,
			  (addr & (HEAP_PAGE_SIZE - 1)) / idx->ptr_size);
}

/* ORs n bits of src starting at bit from into dst starting at bit to (dst pre-zeroed). */
static void or_bits(uint64_t *dst, uint64_t to, const uint64_t *src, uint64_t from, uint64_t n)
{
	while (n > 0) {
		unsigned take = n < 64 ? (unsigned)n : 64;
		uint64_t v = src[from >> 6] >> (from & 63);

		if ((from & 63) && (from & 63) + take > 64)
			v |= src[(from >> 6) + 1] << (64 - (from & 63));
		if (take < 64)
			v &= (UINT64_C(1) << take) - 1;
		dst[to >> 6] |= v << (to & 63);
		if ((to & 63) && (to & 63) + take > 64)
			dst[(to >> 6) + 1] |= v >> (64 - (to & 63));
		from += take;
		to += take;
		n -= take;
	}
}

/*
 * Calls fn for each page-sized piece of the nwords words from addr that has pointer
 * bits: the page's bit block, the first bit in it, how many, and how many words of the
 * range came before.
 */
static void for_each_bit_block(const struct heap_index *idx, uint64_t addr, uint64_t nwords,
			       void (*fn)(const uint64_t *block, uint64_t first, uint64_t n,
					  uint64_t done, void *arg),
			       void *arg)
{
	uint64_t words_per_page = HEAP_PAGE_SIZE / idx->ptr_size;
	uint64_t done = 0;

	while (done < nwords) {
		uint64_t at = addr + done * idx->ptr_size;
		uint64_t first = (at & (HEAP_PAGE_SIZE - 1)) / idx->ptr_size;
		uint64_t n = words_per_page - first;
		const struct heap_page *p = page_find(idx, at >> HEAP_PAGE_SHIFT);

		if (n > nwords - done)
			n = nwords - done;
		if (p && p->bits)
			fn(idx->bit_pool + (size_t)(p->bits - 1) * idx->block_words, first, n, done,
			   arg);
		done += n;
	}
}

static void copy_block(const uint64_t *block, uint64_t first, uint64_t n, uint64_t done,
		       void *out)
{
	or_bits(out, done, block, first, n);
}

static void count_block(const uint64_t *block, uint64_t first, uint64_t n, uint64_t done,
			void *count)
{
	(void)done;
	for (uint64_t w = hr_bit_next(block, first, first + n); w < first + n;
	     w = hr_bit_next(block, w + 1, first + n))
		++*(uint64_t *)count;
}

void heap_index_copy_bits(const struct heap_index *idx, uint64_t addr, uint64_t nwords,
			  uint64_t *out)
{
	uint64_t first = (addr & (HEAP_PAGE_SIZE - 1)) / idx->ptr_size;

	if (nwords - 1 < 64 && first + nwords <= HEAP_PAGE_SIZE / idx->ptr_size) {
		/* most objects: 1 to 64 words in one page, one lookup and a shift or two */
		const struct heap_page *p = page_find(idx, addr >> HEAP_PAGE_SHIFT);
		const uint64_t *block;
		unsigned at = (unsigned)(first & 63);
		uint64_t v;

		out[0] = 0;
		if (!p || !p->bits)
			return;
		block = idx->bit_pool + (size_t)(p->bits - 1) * idx->block_words + first / 64;
		v = block[0] >> at;
		if (at && at + nwords > 64) /* the next word of the block, inside the page */
			v |= block[1] << (64 - at);
		out[0] = nwords < 64 ? v & ((UINT64_C(1) << nwords) - 1) : v;
		return;
	}
	memset(out, 0, hr_bit_words(nwords) * sizeof(uint64_t));
	for_each_bit_block(idx, addr, nwords, copy_block, out);
}

uint64_t heap_index_count_bits(const struct heap_index *idx, uint64_t addr, uint64_t nwords)
{
	uint64_t count = 0;

	for_each_bit_block(idx, addr, nwords, count_block, &count);
	return count;
}

uint64_t heap_index_bytes(const struct heap_index *idx)
{
	size_t ents = idx->ents ? idx->nobj : idx->nchunks * ENT_CHUNK;

	return idx->page_slots * sizeof(*idx->pages) +
	       idx->bit_cap * idx->block_words * sizeof(uint64_t) + ents * sizeof(uint32_t) +
	       idx->whole_cap * sizeof(*idx->wholes) + idx->map_cap * sizeof(*idx->map_pool) +
	       idx->meta_cap * sizeof(*idx->metas) +
	       (idx->order ? idx->page_used * (sizeof(*idx->order) + sizeof(*idx->runs)) : 0) +
	       (idx->dir ? ((idx->nobj >> HEAP_DIR_SHIFT) + 1) * sizeof(*idx->dir) : 0);
}
