/*
 * dump_index.c - the heap object index: objects sorted by address, a sparse page table
 * for address -> object lookups, and one pointer bit per heap word.
 * See dump_internal.h for the layout and why it is shaped this way.
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "dump_internal.h"

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

/* Lays the page table out as a direct array if that is no larger (dump_internal.h). */
static void page_table_direct(struct heap_index *idx)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	struct heap_page *pages;
	size_t i;

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
	free(idx->pages);
	idx->pages = pages;
	idx->page_slots = (size_t)(hi - lo + 1);
	idx->page_lo = lo;
	idx->page_direct = true;
	idx->cached = NULL;
	idx->added = NULL;
}

/* Finds or creates the entry of page_no (in the hash: before heap_index_finish()). */
static int page_get(struct heap_index *idx, uint64_t page_no, struct heap_page **out)
{
	size_t i;
	int rc;

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

int heap_index_init(struct heap_index *idx, const uint8_t *file, uint32_t ptr_size)
{
	memset(idx, 0, sizeof(*idx));
	idx->file = file;
	idx->ptr_size = ptr_size;
	idx->block_words = (uint32_t)hr_bit_words(HEAP_PAGE_SIZE / ptr_size);
	idx->page_slots = 1024;
	idx->pages = alloc_page_table(idx->page_slots);
	return idx->pages ? HR_OK : HR_ENOMEM;
}

/*
 * Reading chunks are mapped, not malloc()ed, so that freeing them during the sort gives
 * the memory back: glibc raises its mmap threshold each time it frees a mapped block
 * (the page table as it grows), after which it serves 1 MiB from the brk heap, where
 * the freed chunks stayed resident (some 80 MB on a dump of 10M objects).
 */
static struct heap_obj *chunk_alloc(void)
{
	void *p = mmap(NULL, OBJ_CHUNK * sizeof(struct heap_obj), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void chunk_free(struct heap_obj *chunk)
{
	if (chunk)
		munmap(chunk, OBJ_CHUNK * sizeof(*chunk));
}

void heap_index_release(struct heap_index *idx)
{
	free(idx->pages);
	free(idx->bit_pool);
	free(idx->map_pool);
	for (size_t i = 0; i < idx->nchunks; i++)
		chunk_free(idx->chunks[i].objs);
	free(idx->chunks);
	free(idx->objs);
	free(idx->big);
	memset(idx, 0, sizeof(*idx));
}

static struct heap_obj *append_object(struct heap_index *idx)
{
	struct obj_chunk *last = idx->nchunks ? &idx->chunks[idx->nchunks - 1] : NULL;

	if (!last || last->n == OBJ_CHUNK) {
		last = hr_array_push((void **)&idx->chunks, &idx->nchunks, &idx->chunks_cap,
				     sizeof(*last));
		if (!last)
			return NULL;
		last->objs = chunk_alloc();
		if (!last->objs) {
			idx->nchunks--;
			return NULL;
		}
	}
	idx->nobj++;
	return &last->objs[last->n++];
}

int heap_index_add(struct heap_index *idx, uint64_t addr, uint64_t size, uint64_t data_off)
{
	uint64_t page, last = (addr + size - 1) >> HEAP_PAGE_SHIFT;
	struct heap_obj *obj;
	struct heap_page *p;
	int rc;

	page = addr >> HEAP_PAGE_SHIFT;
	if (page == last && idx->added && idx->added->page_no == page) {
		idx->added->count++; /* same page as the object before: most objects */
	} else {
		for (; page <= last; page++) {
			rc = page_get(idx, page, &p);
			if (rc)
				return rc;
			if (page == addr >> HEAP_PAGE_SHIFT)
				p->count++; /* objects starting in it, for the sort */
			idx->added = p;
		}
	}
	obj = append_object(idx);
	if (!obj)
		return HR_ENOMEM;
	obj->addr = addr;
	if (size >= OBJ_SIZE_ESCAPE) {
		struct heap_big_size *big = hr_array_push((void **)&idx->big, &idx->nbig,
							  &idx->big_cap, sizeof(*big));
		if (!big)
			return HR_ENOMEM;
		big->addr = addr;
		big->size = size;
		obj->packed = data_off << OBJ_SIZE_BITS | OBJ_SIZE_ESCAPE;
	} else {
		obj->packed = data_off << OBJ_SIZE_BITS | size;
	}
	idx->total_bytes += size;
	return HR_OK;
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
	hr_bit_set(bits, (addr & (HEAP_PAGE_SIZE - 1)) / idx->ptr_size);
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

/* Gives dst's page of src's page p its pointer bits: src's block, moved by block_base. */
static int absorb_page(struct heap_index *dst, const struct heap_page *p, size_t block_base)
{
	struct heap_page *q;
	int rc = page_get(dst, p->page_no, &q);

	if (rc)
		return rc;
	q->count += p->count;
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

int heap_index_absorb(struct heap_index *dst, struct heap_index *src)
{
	size_t base = dst->bit_blocks, i;
	int rc;

	if (dst->bit_blocks + src->bit_blocks >= UINT32_MAX - 1 ||
	    hr_array_reserve((void **)&dst->chunks, &dst->chunks_cap, dst->nchunks + src->nchunks,
			     sizeof(*dst->chunks)) ||
	    hr_array_reserve((void **)&dst->big, &dst->big_cap, dst->nbig + src->nbig,
			     sizeof(*dst->big)) ||
	    reserve_bits_exactly(dst, base + src->bit_blocks))
		return HR_ENOMEM;
	/* each copy only when there is something: the arrays of an empty half are NULL */
	if (src->bit_blocks)
		memcpy(dst->bit_pool + base * dst->block_words, src->bit_pool,
		       src->bit_blocks * src->block_words * sizeof(uint64_t));
	dst->bit_blocks += src->bit_blocks;
	for (i = 0; i < src->page_slots; i++)
		if (src->pages[i].page_no != HEAP_NO_PAGE &&
		    (rc = absorb_page(dst, &src->pages[i], base)))
			return rc;
	if (src->nchunks)
		memcpy(dst->chunks + dst->nchunks, src->chunks, src->nchunks * sizeof(*src->chunks));
	dst->nchunks += src->nchunks;
	src->nchunks = 0; /* dst owns them now */
	if (src->nbig)
		memcpy(dst->big + dst->nbig, src->big, src->nbig * sizeof(*src->big));
	dst->nbig += src->nbig;
	dst->nobj += src->nobj;
	dst->total_bytes += src->total_bytes;
	dst->added = dst->cached = NULL;
	heap_index_release(src);
	return HR_OK;
}

uint64_t heap_index_obj_size(const struct heap_index *idx, size_t i)
{
	uint64_t code = idx->objs[i].packed & OBJ_SIZE_ESCAPE;
	size_t lo = 0, hi = idx->nbig;

	if (code != OBJ_SIZE_ESCAPE)
		return code;
	while (lo < hi) { /* big sizes are sorted by address */
		size_t mid = lo + (hi - lo) / 2;

		if (idx->big[mid].addr < idx->objs[i].addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return idx->big[lo].size;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static int cmp_obj(const void *a, const void *b)
{
	return cmp_u64(&((const struct heap_obj *)a)->addr, &((const struct heap_obj *)b)->addr);
}

static int cmp_big(const void *a, const void *b)
{
	return cmp_u64(&((const struct heap_big_size *)a)->addr,
		       &((const struct heap_big_size *)b)->addr);
}

/*
 * Page numbers of all pages in use, sorted; each page's `first` temporarily holds
 * its rank in that order.
 */
static uint64_t *rank_pages(struct heap_index *idx)
{
	uint64_t *order = malloc((idx->page_used ? idx->page_used : 1) * sizeof(*order));
	size_t i, n = 0;

	if (!order)
		return NULL;
	for (i = 0; i < idx->page_slots; i++)
		if (idx->pages[i].page_no != HEAP_NO_PAGE)
			order[n++] = idx->pages[i].page_no;
	qsort(order, n, sizeof(*order), cmp_u64);
	for (i = 0; i < n; i++)
		page_find(idx, order[i])->first = (uint32_t)i;
	return order;
}

/* Rank of the page an object starts in; *p caches the page of the object before. */
static uint32_t start_rank(const struct heap_index *idx, const struct heap_obj *o,
			   struct heap_page **p)
{
	uint64_t page_no = o->addr >> HEAP_PAGE_SHIFT;

	if (!*p || (*p)->page_no != page_no)
		*p = page_find(idx, page_no);
	return (*p)->first; /* holds the page's rank until sort_objects() is done */
}

/*
 * Builds the slot map of a grid page with free slots: bit k of the map (in words of
 * HEAP_MAP_BITS bits) is set if slot k holds an object, and each word's top 16 bits
 * count the objects in the slots of the words before. False if over budget or no memory.
 */
static bool page_map(struct heap_index *idx, struct heap_page *p, uint32_t stride)
{
	const struct heap_obj *o = &idx->objs[p->first];
	uint32_t slots = (uint32_t)(HEAP_PAGE_SIZE - p->start + stride - 1) / stride;
	size_t words = (slots + HEAP_MAP_BITS - 1) / HEAP_MAP_BITS, w;
	uint64_t *map, base = o[0].addr, before = 0;

	if (words * sizeof(*map) > (size_t)p->count * HEAP_MAP_BYTES_PER_OBJ ||
	    hr_array_reserve((void **)&idx->map_pool, &idx->map_cap, idx->map_words + words,
			     sizeof(*map)))
		return false;
	map = idx->map_pool + idx->map_words;
	memset(map, 0, words * sizeof(*map));
	for (uint32_t i = 0; i < p->count; i++) {
		uint32_t slot = (uint32_t)(o[i].addr - base) / stride; /* in the page: < 2^13 */

		map[slot / HEAP_MAP_BITS] |= UINT64_C(1) << (slot % HEAP_MAP_BITS);
	}
	for (w = 0; w < words; w++) {
		uint64_t n = (uint64_t)__builtin_popcountll(map[w]);

		map[w] |= before << HEAP_MAP_BITS;
		before += n;
	}
	p->map = (uint32_t)idx->map_words; /* < 2^32: the budget keeps maps under nobj / 4 words */
	idx->map_words += words;
	return true;
}

/*
 * Checks the objects starting in page p against the ones before them, and records the
 * page's grid (see struct heap_page) if they sit on one. Returns the index of the
 * first of them to overlap the object before it, or 0 if none does.
 */
static size_t page_scan(struct heap_index *idx, struct heap_page *p)
{
	const struct heap_obj *o = idx->objs;
	size_t i, end = (size_t)p->first + p->count;
	uint64_t size = o[p->first].packed & OBJ_SIZE_ESCAPE;
	bool grid = p->count >= 2 && size > 0 && size < HEAP_PAGE_SIZE, dense = true;

	for (i = p->first ? p->first : 1; i < end; i++) { /* object 0 has none before */
		uint64_t step = o[i].addr - o[i - 1].addr;

		if (step < heap_index_obj_size(idx, i - 1))
			return i;
		if (i == p->first || !grid)
			continue;
		if ((o[i].packed & OBJ_SIZE_ESCAPE) != size ||
		    (step != size && (uint32_t)step % (uint32_t)size)) /* both < 2^13 */
			grid = false;
		else if (step != size)
			dense = false; /* free slots in between */
	}
	if (!grid)
		return 0;
	p->start = o[p->first].addr & (HEAP_PAGE_SIZE - 1);
	p->dense = dense;
	if (dense || page_map(idx, p, (uint32_t)size))
		p->stride = (uint32_t)size;
	return 0;
}

/*
 * Sorts objects by address: a counting sort on the page an object starts in, scattered
 * from the reading chunks into one array. Go writes a span's objects in address order
 * and a page belongs to one span, so this sort is complete for a dump Go wrote and its
 * writes are sequential within each span; a general sort covers any other order.
 * (Cycle-following in place needs 4 bytes an object less but was five times slower.)
 */
static int sort_objects(struct heap_index *idx)
{
	uint64_t *order = rank_pages(idx);
	struct heap_page *p = NULL;
	uint32_t *start = NULL;
	size_t i, c, run = 0;
	int rc = HR_ENOMEM;

	if (!order)
		goto out;
	start = calloc(idx->page_used + 1, sizeof(*start));
	idx->objs = malloc((idx->nobj ? idx->nobj : 1) * sizeof(*idx->objs));
	advise_huge(idx->objs, idx->nobj * sizeof(*idx->objs));
	if (!start || !idx->objs)
		goto out;
	for (i = 0; i < idx->page_used; i++) { /* heap_index_add() counted each page's */
		start[i] = (uint32_t)run;
		run += page_find(idx, order[i])->count;
	}
	for (c = 0; c < idx->nchunks; c++) {
		const struct heap_obj *o = idx->chunks[c].objs;

		for (i = 0; i < idx->chunks[c].n; i++)
			idx->objs[start[start_rank(idx, &o[i], &p)]++] = o[i];
		chunk_free(idx->chunks[c].objs);
		idx->chunks[c] = (struct obj_chunk){ 0 };
	}
	idx->nchunks = 0;
	for (i = 1; i < idx->nobj; i++)
		if (idx->objs[i - 1].addr > idx->objs[i].addr)
			break;
	if (i < idx->nobj)
		qsort(idx->objs, idx->nobj, sizeof(*idx->objs), cmp_obj);
	/* Fill each page's object range: after the scatter start[r] is the end of rank r. */
	for (i = 0; i < idx->page_used; i++) {
		uint32_t end = start[i], first = i ? start[i - 1] : 0;

		p = page_find(idx, order[i]);
		p->first = first;
		p->count = end - first;
	}
	rc = HR_OK;
out:
	free(order);
	free(start);
	return rc;
}

int heap_index_finish(struct heap_index *idx, const char *name, struct hr_error *err)
{
	struct heap_page *p;
	size_t i;
	int rc;

	if (idx->nobj > UINT32_MAX - 1)
		return hr_error_set(err, HR_EINPUT, "%s: more than %" PRIu32 " objects", name,
				    UINT32_MAX - 1);
	if (idx->nbig > 1)
		qsort(idx->big, idx->nbig, sizeof(*idx->big), cmp_big);
	rc = sort_objects(idx);
	if (rc)
		return hr_error_set(err, rc, "%s: out of memory sorting %zu objects", name, idx->nobj);
	page_table_direct(idx);
	for (i = 0; i < idx->nobj; i += p->count) { /* each page objects start in, in order */
		size_t bad;

		p = page_find(idx, idx->objs[i].addr >> HEAP_PAGE_SHIFT);
		bad = page_scan(idx, p);
		if (bad)
			return hr_error_set(err, HR_EINPUT,
					    "%s: byte %" PRIu64 ": object at 0x%" PRIx64
					    " overlaps the object at 0x%" PRIx64,
					    name, idx->objs[bad].packed >> OBJ_SIZE_BITS,
					    idx->objs[bad].addr, idx->objs[bad - 1].addr);
	}
	return HR_OK;
}

/*
 * On a grid page (p->stride set, off at or past the grid's start): the object of off's
 * slot holds it, if there is one; one before ends at or before the slot, one after
 * starts after it. Its start and size follow from the grid, not from idx->objs.
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
			      (size_t)__builtin_popcountll(w & ((UINT64_C(1) << bit) - 1)));
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

int64_t heap_index_locate(const struct heap_index *idx, uint64_t addr, struct heap_span *span)
{
	const struct heap_page *p = page_find(idx, addr >> HEAP_PAGE_SHIFT);
	uint32_t off = (uint32_t)(addr & (HEAP_PAGE_SIZE - 1));
	size_t lo, hi;
	int64_t cand;

	if (!p)
		return -1;
	lo = p->first;
	hi = lo + p->count;
	if (p->stride && off >= p->start)
		return grid_find(idx, p, addr, off, span);
	if (lo == hi || idx->objs[lo].addr > addr) {
		cand = (int64_t)lo - 1; /* starts in an earlier page, if anything */
	} else {
		while (hi - lo > 1) { /* invariant: objs[lo].addr <= addr < objs[hi].addr */
			size_t mid = lo + (hi - lo) / 2;

			if (idx->objs[mid].addr <= addr)
				lo = mid;
			else
				hi = mid;
		}
		cand = (int64_t)lo;
	}
	if (cand < 0)
		return -1;
	span->addr = idx->objs[cand].addr;
	span->size = heap_index_obj_size(idx, (size_t)cand);
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
 * The page entries of what the first words of object o from offset point to (its
 * contents are in cache by now): the walk looks each target up next. Any word that
 * falls in a page of the heap counts, pointer or not; only a direct page table is
 * worth it (a hash would be probed for every word).
 */
static void prefetch_targets(const struct heap_index *idx, const struct heap_obj *o,
			     uint64_t offset)
{
	uint64_t size = o->packed & OBJ_SIZE_ESCAPE, n;
	const uint8_t *data = idx->file + (o->packed >> OBJ_SIZE_BITS) + offset;

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
	const struct heap_obj *o = &idx->objs[i];
	const struct heap_page *p;

	/*
	 * GCC counts __builtin_prefetch as no side effect: a function made only of
	 * prefetches is found "const" across units (LTO) and its calls are deleted, which
	 * silently took every prefetch stage but the inlined one out of the Release build.
	 * An empty volatile asm is a side effect the optimizer must keep.
	 */
	__asm__ volatile("");
	switch (stage) {
	case HR_PREFETCH_ENTRY:
		__builtin_prefetch(o);
		break;
	case HR_PREFETCH_CONTENTS: {
		const uint8_t *data = idx->file + (o->packed >> OBJ_SIZE_BITS) + offset;
		uint64_t size = o->packed & OBJ_SIZE_ESCAPE; /* at least 16 MiB if the escape */
		uint64_t ahead = size > offset ? size - offset : 1;

		/* the first and last line of up to 128 bytes: the whole of most objects */
		__builtin_prefetch(data);
		__builtin_prefetch(data + (ahead < 128 ? ahead : 128) - 1);
		__builtin_prefetch(page_probe(idx, o->addr >> HEAP_PAGE_SHIFT));
		break;
	}
	case HR_PREFETCH_BITS:
		p = page_probe(idx, o->addr >> HEAP_PAGE_SHIFT);
		if (p && p->page_no == o->addr >> HEAP_PAGE_SHIFT && p->bits)
			__builtin_prefetch(idx->bit_pool + (size_t)(p->bits - 1) * idx->block_words +
					   (o->addr & (HEAP_PAGE_SIZE - 1)) / idx->ptr_size / 64);
		prefetch_targets(idx, o, offset);
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
	return idx->page_slots * sizeof(*idx->pages) +
	       idx->bit_cap * idx->block_words * sizeof(uint64_t) +
	       (idx->objs ? idx->nobj : idx->nchunks * OBJ_CHUNK) * sizeof(*idx->objs) +
	       idx->big_cap * sizeof(*idx->big) + idx->map_cap * sizeof(*idx->map_pool);
}
