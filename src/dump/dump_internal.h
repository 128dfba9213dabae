/*
 * dump_internal.h - the dump reader's private structures, shared by dump_reader.c
 * (record parsing) and dump_index.c (the heap object index).
 */
#ifndef HEAPREF_DUMP_INTERNAL_H
#define HEAPREF_DUMP_INTERNAL_H

#include "heapref/dump.h"

/*
 * The heap index.
 *
 * Objects are kept in one array of 16-byte entries: the address, and the offset of the
 * contents in the file packed with the size (sizes of 16 MiB and more go to a small side
 * table). While records are read, entries are appended to fixed-size chunks in file
 * order; once all are read they are scattered into one array sorted by address, each
 * chunk freed as soon as it has been scattered, so the peak stays near 22 bytes an
 * object rather than the 32 of two whole arrays.
 *
 * A sparse page table maps each 8 KiB heap page that some object touches to
 *   - the range of objects that start in it (so a lookup is a short binary search
 *     within one page, however large the heap), and
 *   - a block of pointer bits, one per word of the page, allocated only for pages that
 *     hold pointers.
 * It is an open-addressing hash keyed by page number, so its size follows the pages in
 * use, never the span of addresses a (possibly hostile) params record claims. Once all
 * objects are in, if the pages in use span no more entries than the hash has, the
 * table is laid out again as a plain array indexed by page number (`page_direct`): a
 * lookup is then one load, from a smaller table (a heap's pages are mostly contiguous,
 * and the hash is 2-4 times the pages in use).
 */
#define HEAP_PAGE_SHIFT 13
#define HEAP_PAGE_SIZE (UINT64_C(1) << HEAP_PAGE_SHIFT)
#define HEAP_NO_PAGE UINT64_MAX
#define OBJ_SIZE_BITS 24
#define OBJ_SIZE_ESCAPE ((UINT64_C(1) << OBJ_SIZE_BITS) - 1)
#define OBJ_MAX_FILE_OFFSET (UINT64_C(1) << (64 - OBJ_SIZE_BITS))
#define OBJ_CHUNK_SHIFT 16 /* 64 Ki objects, 1 MiB, per chunk while reading */
#define OBJ_CHUNK (UINT64_C(1) << OBJ_CHUNK_SHIFT)

struct heap_obj {
	uint64_t addr;
	uint64_t packed; /* file offset of contents << OBJ_SIZE_BITS | size (or OBJ_SIZE_ESCAPE) */
};

/* Objects as read, in file order: full chunks but for the last of each reader's run. */
struct obj_chunk {
	struct heap_obj *objs; /* OBJ_CHUNK entries, mapped */
	size_t n;              /* in use */
};

struct heap_big_size {
	uint64_t addr;
	uint64_t size;
};

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
	uint32_t first;    /* index of the first object starting at or after this page */
	uint32_t count;    /* objects starting in this page */
	/* Set by heap_index_finish() when count >= 2 and all of them are `stride` bytes
	 * long and start at `start` + k * stride in this page (slot k); else stride is 0. */
	uint32_t start : HEAP_PAGE_SHIFT;  /* offset in the page of the first one */
	uint32_t stride : HEAP_PAGE_SHIFT; /* < page size, as two start in the page */
	uint32_t dense : 1;                /* slots 0 .. count-1 hold them, no map */
	uint32_t map;                      /* not dense: its slot map's word in map_pool */
};                                         /* 32 bytes */

struct heap_index {
	const uint8_t *file;      /* the mapping, for object contents */
	uint32_t ptr_size;
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

	struct obj_chunk *chunks; /* while reading: objects in file order */
	size_t nchunks;
	size_t chunks_cap;
	struct heap_obj *objs;    /* after heap_index_finish(): sorted by address */
	size_t nobj;

	struct heap_big_size *big; /* sorted by address after heap_index_finish() */
	size_t nbig;
	size_t big_cap;

	uint64_t total_bytes;
	struct heap_page *cached; /* last page touched by heap_index_set_ptr() */
	struct heap_page *added;  /* last page touched by heap_index_add() */
};

/*
 * hr_dump_open_bytes(), reading the second half of the records with another thread
 * when the part after the params record is split_min bytes or more (normally 64 MiB;
 * tests lower it). The result is the same whatever split_min.
 */
struct hr_dump *dump_open_bytes_split(const void *bytes, size_t len, const char *name,
				      size_t split_min, struct hr_error *err);
/* What became of reading the second half with another thread. */
enum dump_split {
	DUMP_SPLIT_NONE,    /* not tried: a small file, one processor, no plausible start */
	DUMP_SPLIT_DROPPED, /* its start was no record boundary: read by one thread after all */
	DUMP_SPLIT_KEPT,
};
enum dump_split dump_split_outcome(const struct hr_dump *dump);

/* A block of strings copied into the model (dump_build.c). */
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

struct hr_dump {
	char *path;
	const uint8_t *map;
	size_t map_len;
	bool owns_map;
	unsigned minor;

	bool have_params;
	struct hr_dump_params params;
	uint64_t counts[HR_REC_KIND_COUNT];
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
	VEC(struct hr_type_record, types);
	VEC(struct hr_itab, itabs);
	VEC(struct hr_os_thread, threads);
	VEC(struct hr_other_root, other_roots);
	VEC(struct hr_defer, defers);
	VEC(struct hr_panic, panics);
	VEC(struct hr_memprof_bucket, buckets);
	VEC(struct hr_memprof_frame, bucket_frames);
	VEC(struct hr_alloc_sample, samples);

	bool have_memstats;
	struct hr_memstats memstats;
	size_t split_min;       /* files this large have their second half read by a thread */
	enum dump_split split;  /* what became of that */
	enum hr_source source;
	const char *caveat;     /* hr_dump_build_caveat(), in strings */
	/* go1.3 and go1.4 dumps: per object (sorted index), the type its records give:
	 * OBJ_TYPE_NONE or (index into types + 1) << 2 | enum obj_type_how. */
	uint32_t *obj_types;
	struct str_block *strings; /* copies made by hr_dump_build_string(), newest first */
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

int heap_index_init(struct heap_index *idx, const uint8_t *file, uint32_t ptr_size);
void heap_index_release(struct heap_index *idx);
/* Adds an object; its pages get entries. data_off is the offset of its contents. */
int heap_index_add(struct heap_index *idx, uint64_t addr, uint64_t size, uint64_t data_off);
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
 * err naming `name`) if two objects overlap.
 */
int heap_index_finish(struct heap_index *idx, const char *name, struct hr_error *err);
int64_t heap_index_find(const struct heap_index *idx, uint64_t addr);
/* The start and size of an object heap_index_locate() found. */
struct heap_span {
	uint64_t addr;
	uint64_t size;
};
/* heap_index_find(), also giving the object's span: on grid pages without reading objs. */
int64_t heap_index_locate(const struct heap_index *idx, uint64_t addr, struct heap_span *span);
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

#endif
