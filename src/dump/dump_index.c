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

static struct heap_page *alloc_page_table(size_t slots)
{
	struct heap_page *pages = malloc(slots * sizeof(*pages));
	size_t i;

	if (!pages)
		return NULL;
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
		chunk_free(idx->chunks[i]);
	free(idx->chunks);
	free(idx->objs);
	free(idx->big);
	memset(idx, 0, sizeof(*idx));
}

static struct heap_obj *append_object(struct heap_index *idx)
{
	size_t slot = idx->nobj & (OBJ_CHUNK - 1);

	if (slot == 0) {
		struct heap_obj **chunk = hr_array_push((void **)&idx->chunks, &idx->nchunks,
							&idx->chunks_cap, sizeof(*chunk));

		if (!chunk)
			return NULL;
		*chunk = chunk_alloc();
		if (!*chunk) {
			idx->nchunks--;
			return NULL;
		}
	}
	idx->nobj++;
	return &idx->chunks[idx->nchunks - 1][slot];
}

int heap_index_add(struct heap_index *idx, uint64_t addr, uint64_t size, uint64_t data_off)
{
	uint64_t page, last = (addr + size - 1) >> HEAP_PAGE_SHIFT;
	struct heap_obj *obj;
	struct heap_page *p;
	int rc;

	page = addr >> HEAP_PAGE_SHIFT;
	if (page == last && idx->added && idx->added->page_no == page)
		page++; /* same page as the object before: most objects */
	for (; page <= last; page++) {
		rc = page_get(idx, page, &p);
		if (rc)
			return rc;
		idx->added = p;
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
		if (hr_array_reserve((void **)&idx->bit_pool, &idx->bit_cap, idx->bit_blocks + 1,
				     (size_t)idx->block_words * sizeof(uint64_t)))
			return NULL;
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
	if (!start || !idx->objs)
		goto out;
	for (i = 0; i < idx->nobj; i++)
		start[start_rank(idx, &idx->chunks[i >> OBJ_CHUNK_SHIFT][i & (OBJ_CHUNK - 1)], &p)]++;
	for (i = 0; i < idx->page_used; i++) {
		uint32_t count = start[i];

		start[i] = (uint32_t)run;
		run += count;
	}
	for (c = 0; c < idx->nchunks; c++) {
		size_t n = c + 1 < idx->nchunks ? OBJ_CHUNK : idx->nobj - c * OBJ_CHUNK;

		for (i = 0; i < n; i++)
			idx->objs[start[start_rank(idx, &idx->chunks[c][i], &p)]++] = idx->chunks[c][i];
		chunk_free(idx->chunks[c]);
		idx->chunks[c] = NULL;
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

int64_t heap_index_find(const struct heap_index *idx, uint64_t addr)
{
	const struct heap_page *p = page_find(idx, addr >> HEAP_PAGE_SHIFT);
	uint32_t off = (uint32_t)(addr & (HEAP_PAGE_SIZE - 1));
	size_t lo, hi;
	int64_t cand;

	if (!p)
		return -1;
	lo = p->first;
	hi = lo + p->count;
	if (p->stride && off >= p->start) {
		/* On the page's grid: the object of addr's slot holds addr, if there is one;
		 * one before ends at or before the slot, one after starts after addr. */
		uint32_t slot = (off - p->start) / p->stride, bit = slot % HEAP_MAP_BITS;
		uint64_t w;

		if (p->dense) /* slots 0 .. count-1 hold objects first .. first+count-1 */
			return slot < p->count ? (int64_t)(lo + slot) : -1;
		w = idx->map_pool[p->map + slot / HEAP_MAP_BITS];
		if (!(w >> bit & 1))
			return -1; /* a free slot */
		return (int64_t)(lo + (w >> HEAP_MAP_BITS) +
				 (size_t)__builtin_popcountll(w & ((UINT64_C(1) << bit) - 1)));
	}
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
	if (cand < 0 || addr - idx->objs[cand].addr >= heap_index_obj_size(idx, (size_t)cand))
		return -1;
	return cand;
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
