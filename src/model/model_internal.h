/* SPDX-License-Identifier: Apache-2.0 */
/*
 * model_internal.h - the heap model's private structures, shared by model.c (its
 * accessors), heap_index.c (the heap object index) and model_build.c (building it
 * through model.h's calls), and by the dump reader, which fills the model directly as
 * it parses records (src/dump/).
 */
#ifndef HEAPREF_MODEL_INTERNAL_H
#define HEAPREF_MODEL_INTERNAL_H

#include "heapref/dump.h"
#include "heapref/model.h"

/*
 * The heap index.
 *
 * An object costs 4 bytes of index, a `uint32_t` entry: where it starts in its page
 * (13 bits) and where its contents are in memory, as an offset from its page's `base`
 * (ENT_DELTA_BITS bits). Contents are wherever the front end has them: in the mapped
 * file (a dump, a core), or in memory the model owns (what a front end copied); `base`
 * and a whole object's `off` hold their addresses (heap_contents()). Its page's run gives the rest: the page number, the
 * base, and the size all the page's objects share. That is what a Go dump holds: a page
 * belongs to one span, whose objects are all one size and are written one after another,
 * in address order, so each page's objects form one run of entries. (Runs, struct
 * heap_run, are kept apart from the page table, which keeps its 32-byte entries: the
 * scan looks a page up for every pointer.) While reading, entries
 * are appended to fixed-size chunks in file order (a page's run is found by its `pos`);
 * once all are read, each run is copied to its place in one array in address order
 * (entry i is object i's), each chunk unmapped once its runs are copied, so the peak
 * stays near 4 bytes an object and the copies go run by run, not object by object.
 * An object that does not fit its page's run (another size, a lower address, contents
 * too far or before the base; a page whose objects are not together in the file, as the
 * one cut by the split between two reading threads) is kept whole (struct heap_whole,
 * 24 bytes); once all are read, every object of such a page is, in address order.
 *
 * Objects are numbered in address order. A directory block per 64 of them (1 byte an
 * object) holds what its objects need of their pages (struct heap_dir), so that object
 * i is two loads that need nothing but i, entry i and block i / 64: the scan's
 * lookahead prefetches both at once, as it did the 16-byte entry before. The block
 * also gives the rank (among the pages objects start in, in address order) of the page
 * of its first object, and a bit for each object that is the first of its page: for
 * the other objects, `runs[rank]` has what they need of their page.
 *
 * A sparse page table maps each 8 KiB heap page that some object touches to
 *   - the range of objects that start in it (so a lookup is a short binary search
 *     within one page, however large the heap), and
 *   - a block of pointer bits, one per word of the page, allocated only for pages that
 *     hold pointers.
 * It is an open-addressing hash keyed by page number, so its size follows the pages in
 * use, never the span of addresses a (possibly hostile) params record claims; unless
 * that span is small beside the file, when the table is a plain array over it from the
 * start (heap_index_plan_pages(), as a large dump's reader does). Once all
 * objects are in, if the pages in use span no more entries than the hash has, the
 * table is laid out again as a plain array indexed by page number (`page_direct`): a
 * lookup is then one load, from a smaller table (a heap's pages are mostly contiguous,
 * and the hash is 2-4 times the pages in use).
 */
#define HEAP_PAGE_SHIFT 13
#define HEAP_PAGE_SIZE (UINT64_C(1) << HEAP_PAGE_SHIFT)
#define HEAP_NO_PAGE UINT64_MAX
#define ENT_DELTA_BITS (32 - HEAP_PAGE_SHIFT)
#define ENT_DELTA_MAX ((UINT32_C(1) << ENT_DELTA_BITS) - 1)
#define ENT_CHUNK_SHIFT 18 /* 256 Ki entries, 1 MiB, per chunk while reading */
#define ENT_CHUNK (UINT64_C(1) << ENT_CHUNK_SHIFT)
#define HEAP_DIR_SHIFT 6   /* objects per directory block: 64, one bit each */
#define OBJ_MAX_FILE_OFFSET (UINT64_C(1) << 40) /* files heapref reads are smaller */

/* Entries as read, in file order, entry pos in chunk pos / ENT_CHUNK: full chunks but for
 * the last, and the first reading thread's last once the other's are merged after it. */
struct ent_chunk {
	uint32_t *ents; /* ENT_CHUNK entries, mapped */
	size_t n;       /* in use */
};

/* An object outside its page's run; after heap_index_finish(), one of a whole page. */
struct heap_whole {
	uint64_t addr;
	uint64_t size;
	uint64_t off; /* the address of its contents (heap_contents()) */
};

/*
 * A directory block (64 bytes, one cache line): the rank of the page its first object
 * starts in, and for two pages, if their objects are a run (not whole), what an object
 * of it needs: the page of the block's first object (the head) and the last page
 * starting in the block (the tail). An object of one of them (most objects: a block
 * holds at most two pages' unless they are large) is found from the block and its
 * entry alone, heap_index_object().
 */
struct heap_dir_run {
	uint64_t page_no;
	uint64_t base; /* as in struct heap_run */
	uint64_t size; /* as in struct heap_run; 0 if the page is whole */
};

/*
 * A page's run: what all its objects share. After heap_index_finish() there is one for
 * each page objects start in, by rank, with what heap_index_object() needs of the page
 * for an object the directory block does not cover: one load, not three.
 */
struct heap_run {
	uint64_t base;    /* the address of the contents of the run's first object; a whole
			   * page: its first in wholes */
	uint64_t size;    /* of each of its objects; 0 for a whole page */
	uint64_t page_no; /* after finish, as `first`: the page's */
	uint32_t first;
	uint32_t unused;
};

struct heap_dir {
	struct heap_dir_run run[2]; /* the head, the tail */
	uint64_t starts;            /* bit k: object 64 * block + k is the first of its page
				     * (k > 0) */
	uint32_t rank;
	uint8_t head_end;           /* objects k < head_end are the head's (0 if whole) */
	uint8_t tail_from;          /* objects k >= tail_from the tail's (64: none) */
	uint16_t unused;
};
_Static_assert(sizeof(struct heap_dir) == 64, "a directory block is a cache line");

/*
 * Most pages hold one span's objects: all of one size, at a fixed stride. For those the
 * page entry says where that grid starts and its stride, so a lookup computes the
 * object's slot instead of binary-searching the page's objects, each step of which is
 * a cache miss. Free slots are not in the dump: if the page has any before its last
 * object, a slot map (one bit per slot, in words of HEAP_MAP_BITS bits under a 16-bit
 * count of the bits set in the words before) turns a slot into an index with one load.
 * A map costs at most HEAP_MAP_BYTES_PER_OBJ bytes per object of its page, else the
 * page falls back to the binary search.
 */
#define HEAP_MAP_BITS 48
#define HEAP_MAP_BYTES_PER_OBJ 2
struct heap_page {
	uint64_t page_no;  /* address >> HEAP_PAGE_SHIFT, HEAP_NO_PAGE for an empty slot */
	uint32_t bits;     /* 1-based block in the bit pool; 0: no pointer in this page */
	union {
		uint32_t first; /* after heap_index_finish(): index of the first object
				 * starting at or after this page */
		uint32_t meta;  /* before: its run's in idx->metas */
	};
	uint32_t count;    /* objects starting in this page */
	/* Set by heap_index_finish() when count >= 2 and all of them are `stride` bytes
	 * long and start at `start` + k * stride in this page (slot k); else stride is 0. */
	uint32_t start : HEAP_PAGE_SHIFT;  /* offset in the page of the first one */
	uint32_t stride : HEAP_PAGE_SHIFT; /* < page size, as two start in the page */
	uint32_t dense : 1;                /* slots 0 .. count-1 hold them, no map */
	uint32_t whole : 1;                /* its objects are whole, not a run: after finish,
					    * wholes[runs[pos].base ...] */
	union {
		uint32_t map; /* after heap_index_finish(), stride set and not dense: its
			       * slot map's word in map_pool */
		uint32_t run; /* before: how many of its objects are in its run */
	};
	uint32_t pos;      /* before: its run's first entry in the chunks; after: its rank */
};                         /* 32 bytes */

struct heap_index {
	uint32_t ptr_size;
	uint32_t ptr_shift;       /* log2(ptr_size): a word's index without a division */
	uint32_t block_words;     /* uint64_t words of pointer bits per page */

	struct heap_page *pages;  /* hash table, power-of-two size; or the direct array */
	size_t page_slots;
	size_t page_used;
	bool page_direct;         /* pages[i] is page page_lo + i (or empty), after finish */
	uint64_t page_lo;

	uint64_t *bit_pool;       /* blocks of block_words words */
	size_t bit_blocks;
	size_t bit_cap;           /* in blocks */

	uint64_t *map_pool;       /* slot maps of pages with free slots */
	size_t map_words;
	size_t map_cap;

	struct ent_chunk *chunks; /* while reading: entries in file order */
	size_t nchunks;
	size_t chunks_cap;
	size_t nents;             /* in the chunks */
	uint32_t *ents;           /* after heap_index_finish(): entry i of object i, mapped */
	uint32_t last_off;        /* in-page offset of the last entry read */
	size_t nobj;

	struct heap_run *metas;   /* while reading: each run's, as each started */
	size_t nmeta;
	size_t meta_cap;
	struct heap_run *runs;    /* after finish: of each page objects start in, by rank */

	struct heap_whole *wholes; /* objects outside a run; by address after finish */
	size_t nwhole;
	size_t whole_cap;

	uint32_t *order;          /* after finish: slot in pages of each page objects start in */
	size_t nstart;
	struct heap_dir *dir;     /* after finish: a block per 64 objects */

	uint64_t total_bytes;
	struct heap_page *cached; /* last page touched by heap_index_set_ptr() */
	struct heap_page *added;  /* last page touched by heap_index_add() */
};

/* Memory the model owns, for contents a front end copied (hr_dump_build_memory()). */
struct mem_block {
	struct mem_block *next;
	uint64_t len;
	uint8_t bytes[];
};

/* A block of strings copied into the model (model_build.c). */
struct str_block {
	struct str_block *next;
	size_t used, cap;
	char bytes[];
};

#define VEC(type, name)  \
	type *name;      \
	size_t name##_n; \
	size_t name##_cap
#define VEC_PUSH(d, name) \
	hr_array_push((void **)&(d)->name, &(d)->name##_n, &(d)->name##_cap, sizeof(*(d)->name))

/* What only a heap dump has, kept beside the model by the dump reader (zero otherwise). */
struct dump_extras {
	unsigned minor;         /* N of "go1.N heap dump"; 0: not a dump */
	uint64_t params_offset; /* where the params record starts */
	struct hr_bytes goexperiment; /* go1.3 and go1.4: what their params record holds */
	VEC(struct hr_type_record, types);
	VEC(struct hr_defer, defers);
	VEC(struct hr_panic, panics);
	bool have_memstats;
	struct hr_memstats memstats;
	/* go1.3 and go1.4 dumps: per object (sorted index), the type its records give:
	 * OBJ_TYPE_NONE or (index into types + 1) << 2 | enum obj_type_how. */
	uint32_t *obj_types;
	size_t split_min;       /* files this large have their second half read by a thread */
	size_t split_at;        /* 0, or where tests have the second half's start looked for */
	int split;              /* enum dump_split (src/dump/dump_internal.h): what became of that */
	size_t split_start;     /* where the second half was guessed to start (an offset) */
	size_t steal_min;       /* bytes left to the first thread for the second to take some */
	size_t steal_at;        /* 0, or where tests have the steal's start looked for */
	bool steal_wait;        /* tests: the first thread waits until the steal is decided */
	int steal;              /* enum dump_split: what became of the steal */
	size_t steal_start;     /* where a kept steal started (an offset) */
};

/* The heap model (model.h). */
struct hr_dump {
	char *path;
	const uint8_t *map;     /* the memory it was built over: object contents point into it */
	size_t map_len;
	bool owns_map;
	struct hr_provenance prov;

	bool have_params;
	struct hr_dump_params params;
	uint64_t counts[HR_REC_KIND_COUNT]; /* what it holds, by the record a dump would use */
	struct heap_index heap;

	struct hr_segment data;
	struct hr_segment bss;
	uint64_t *data_bits;
	uint64_t *bss_bits;

	VEC(struct hr_goroutine, goroutines);
	VEC(struct hr_frame, frames);
	VEC(uint64_t, frame_bits);
	VEC(struct hr_finalizer, finalizers);
	VEC(struct hr_finalizer, queued);
	VEC(struct hr_itab, itabs);
	VEC(struct hr_os_thread, threads);
	VEC(struct hr_other_root, other_roots);
	VEC(struct hr_root_pointer, root_pointers);
	VEC(struct hr_memprof_bucket, buckets);
	VEC(struct hr_memprof_frame, bucket_frames);
	VEC(struct hr_alloc_sample, samples);

	const char *caveat;     /* hr_dump_build_caveat(), in strings */
	struct str_block *strings; /* copies made by hr_dump_build_string(), newest first */
	struct mem_block *memory;  /* made by hr_dump_build_memory(), newest first */
	struct dump_extras dump;
};

#define OBJ_TYPE_NONE 0
enum obj_type_how {
	OBJ_TYPE_SINGLE,  /* a T */
	OBJ_TYPE_ARRAY,   /* an array of T */
	OBJ_TYPE_CHAN,    /* a channel of T, with its buffer */
	OBJ_TYPE_POINTEE, /* what an interface holding a T (usually *U: then a U) points at */
};

/* Frees what the model built by another front end owns besides the tables above. */
void dump_build_release(struct hr_dump *d);
/* A NUL-terminated copy of s in the model's strings; NULL when out of memory. */
const char *model_copy_string(struct hr_dump *d, struct hr_bytes s);

/* ptr_size is 4 or 8: each caller has checked it (the shift a word's index takes needs it). */
int heap_index_init(struct heap_index *idx, uint32_t ptr_size);
/*
 * Before any object is added: lays the page table out directly over the pages of
 * [start, end), where every object will be, if that table is small beside the file
 * (at most one entry per PLAN_FILE_BYTES_PER_PAGE bytes of it, so a params record cannot
 * make it large). Saves growing the hash as pages come, rehashing, merging the other
 * thread's and laying it out again at the end: mixed-4g's read made and zeroed hundreds
 * of MB of tables so. Otherwise the hash stays, and this does nothing.
 */
#define PLAN_FILE_BYTES_PER_PAGE 4096
void heap_index_plan_pages(struct heap_index *idx, uint64_t start, uint64_t end,
			   uint64_t file_bytes);
void heap_index_release(struct heap_index *idx);
/* Adds an object; its pages get entries. Its contents are at `contents`, which must stay
 * as long as the index. */
int heap_index_add(struct heap_index *idx, uint64_t addr, uint64_t size,
		   const uint8_t *contents);
/* Marks the word at addr, inside the object added last, as a pointer. */
int heap_index_set_ptr(struct heap_index *idx, uint64_t addr);
/*
 * Moves everything src holds (objects read after all of dst's, as by another thread
 * from later in the file) into dst, as if dst had read them itself; src is released.
 * 0 or HR_ENOMEM (then src still holds what was not moved; release both).
 */
int heap_index_absorb(struct heap_index *dst, struct heap_index *src);
/*
 * Sorts the objects by address and fills in the page ranges. Fails (HR_EINPUT, with
 * err naming `name`, and the byte of the file where the contents of the second are when
 * they are in [file, file + file_len)) if two objects overlap.
 */
int heap_index_finish(struct heap_index *idx, const char *name, const uint8_t *file,
		      size_t file_len, struct hr_error *err);
int64_t heap_index_find(const struct heap_index *idx, uint64_t addr);
/* The start and size of an object heap_index_locate() found. */
struct heap_span {
	uint64_t addr;
	uint64_t size;
};
/* heap_index_find(), also giving the object's span: on grid pages from the page alone. */
int64_t heap_index_locate(const struct heap_index *idx, uint64_t addr, struct heap_span *span);
/* Whether [addr, addr + size) surely holds no pointer word: in one page that has none. */
bool heap_index_span_pointer_free(const struct heap_index *idx, uint64_t addr, uint64_t size);
uint64_t heap_index_object_slow(const struct heap_index *idx, size_t i, struct heap_span *span);

/* __builtin_popcountll() is a call without -mpopcnt; this is a dozen instructions. */
static inline unsigned heap_popcount(uint64_t x)
{
	x -= x >> 1 & UINT64_C(0x5555555555555555);
	x = (x & UINT64_C(0x3333333333333333)) + (x >> 2 & UINT64_C(0x3333333333333333));
	x = (x + (x >> 4)) & UINT64_C(0x0f0f0f0f0f0f0f0f);
	return (unsigned)((x * UINT64_C(0x0101010101010101)) >> 56);
}
/* What object i's directory block says of its page's run, or NULL if it does not say. */
static inline const struct heap_dir_run *heap_dir_run_of(const struct heap_index *idx, size_t i)
{
	const struct heap_dir *d = &idx->dir[i >> HEAP_DIR_SHIFT];
	unsigned k = i & 63;

	if (k < d->head_end)
		return &d->run[0];
	return k >= d->tail_from ? &d->run[1] : NULL; /* else a middle page's, or whole */
}

/* The contents at address `at`, as the index keeps it (an integer: runs add deltas). */
static inline const uint8_t *heap_contents(uint64_t at)
{
	return (const uint8_t *)(uintptr_t)at;
}

/* Object i (i < nobj, after heap_index_finish()): its span, and (heap_contents()) where
 * its contents are. */
static inline uint64_t heap_index_object(const struct heap_index *idx, size_t i,
					 struct heap_span *span)
{
	const struct heap_dir_run *r = heap_dir_run_of(idx, i);
	uint32_t e;

	if (!r)
		return heap_index_object_slow(idx, i, span);
	e = idx->ents[i];
	span->addr = r->page_no << HEAP_PAGE_SHIFT | e >> ENT_DELTA_BITS;
	span->size = r->size;
	return r->base + (e & ENT_DELTA_MAX);
}
uint64_t heap_index_obj_size(const struct heap_index *idx, size_t i);
/* See hr_dump_prefetch_object(). */
void heap_index_prefetch(const struct heap_index *idx, size_t i, uint64_t offset,
			 enum hr_prefetch_stage stage);
bool heap_index_ptr_bit(const struct heap_index *idx, uint64_t addr);
/* Writes the pointer bits of nwords heap words from addr to out (hr_bit_words(nwords) words). */
void heap_index_copy_bits(const struct heap_index *idx, uint64_t addr, uint64_t nwords,
			  uint64_t *out);
/* How many of the nwords heap words from addr hold pointers. */
uint64_t heap_index_count_bits(const struct heap_index *idx, uint64_t addr, uint64_t nwords);
uint64_t heap_index_bytes(const struct heap_index *idx);

#endif /* HEAPREF_MODEL_INTERNAL_H */
