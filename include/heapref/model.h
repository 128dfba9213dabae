/* SPDX-License-Identifier: Apache-2.0 */
/*
 * model.h - the heap model: what stage 1 builds, from whatever front end, and every
 * later stage reads.
 *
 * A heap of a Go process at one moment, as the front ends find it: the dump reader
 * (dump.h) from a heap dump, the core reader (core.h) from a core file or a live
 * process. It holds
 *   - heap objects sorted by address, with hr_dump_object_at() finding the object that
 *     contains any address (interior pointers too) through a sparse page table, in time
 *     independent of the heap's size; one pointer bit per heap word;
 *   - data and bss segments and stack frames, each with its pointer bitmap;
 *   - goroutines with their frames in depth order, finalizers, itabs, OS threads, other
 *     roots, memory-profile buckets and their alloc samples;
 *   - where it came from (struct hr_provenance): a dump, a core or a process, the Go
 *     release and architecture that wrote it, what could not be read exactly.
 * What only a heap dump has (its format, record offsets, memstats, defers, panics, the
 * type records of go1.3 and go1.4) is the dump reader's, in dump.h.
 *
 * Object contents, frames and segment images point into the memory the model was
 * built over (the mapped file) or into memory it owns (what a front end copied): they
 * live as long as the model. Multi-byte words use the heap's byte order and pointer
 * size (params): read them with hr_dump_word().
 *
 * (The model's functions keep the hr_dump_ prefix of the reader it grew out of.)
 */
#ifndef HEAPREF_MODEL_H
#define HEAPREF_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "heapref/base.h"

/* Record kinds, as numbered by the format. */
enum hr_record_kind {
	HR_REC_EOF = 0,
	HR_REC_OBJECT = 1,
	HR_REC_OTHER_ROOT = 2,
	HR_REC_TYPE = 3,
	HR_REC_GOROUTINE = 4,
	HR_REC_STACK_FRAME = 5,
	HR_REC_PARAMS = 6,
	HR_REC_FINALIZER = 7,
	HR_REC_ITAB = 8,
	HR_REC_OS_THREAD = 9,
	HR_REC_MEMSTATS = 10,
	HR_REC_QUEUED_FINALIZER = 11,
	HR_REC_DATA = 12,
	HR_REC_BSS = 13,
	HR_REC_DEFER = 14,
	HR_REC_PANIC = 15,
	HR_REC_MEMPROF = 16,
	HR_REC_ALLOC_SAMPLE = 17,
	HR_REC_GO_KINDS,        /* the kinds of go1.3 to go1.7 dumps end here */
	/* only the pre-release go1.3 layout of seed 002 has these (numbered 4 and 5 there) */
	HR_REC_STACK_ROOT = HR_REC_GO_KINDS,
	HR_REC_DATA_ROOT,
	HR_REC_KIND_COUNT
};

/* Name of a record kind ("object", "stack frame", ...), or "unknown". */
const char *hr_record_kind_name(unsigned kind);

/* A run of bytes inside the mapped dump (a string or a memory image). */
struct hr_bytes {
	const uint8_t *ptr;
	uint64_t len;
};

struct hr_dump_params {
	bool big_endian;
	uint32_t ptr_size;      /* 4 or 8 */
	uint64_t heap_start;    /* arena range the heap lives in */
	uint64_t heap_end;
	struct hr_bytes goarch; /* "amd64" */
	uint64_t ncpu;          /* 0: unknown */
	/* Where the process loaded its binary: run-time address = ELF address + load_bias,
	 * when the front end could tell (a core's entry point); else the scan works it out
	 * from the data segment (hr_scan_image()). */
	bool load_bias_known;
	uint64_t load_bias;
	/* The runtime's clock (nanotime(): CLOCK_MONOTONIC) when the heap was taken, which
	 * goroutines' wait_since is on: known for a core heapref took of a live process, 0
	 * otherwise (a dump holds nothing on that clock). */
	uint64_t now_ns;
};


/* A heap object: address, size (its size class, from the record) and its memory. */
struct hr_object {
	uint64_t addr;
	uint64_t size;
	const uint8_t *data;
};

/* Data or bss: its address, memory image and one pointer bit per word. */
struct hr_segment {
	bool present;
	uint64_t addr;
	struct hr_bytes contents;
	const uint64_t *ptr_bits; /* hr_bit_words(contents.len / ptr_size) words */
};

struct hr_goroutine {
	uint64_t addr;
	uint64_t sp;
	uint64_t goid;
	uint64_t gopc;          /* PC of the go statement that created it */
	uint64_t status;        /* runtime _G* status, see hr_goroutine_status_name() */
	bool is_system;
	bool is_background;
	uint64_t wait_since;
	struct hr_bytes wait_reason;
	uint64_t ctxt;
	uint64_t thread;        /* M descriptor */
	uint64_t top_defer;
	uint64_t top_panic;
	uint32_t first_frame;   /* index into hr_dump_frames(); frames in depth order */
	uint32_t frame_count;
	bool partial_stack;     /* a core caught it running between safe points: its frames
				 * stop before the bottom of its stack (or there are none) */
};

/* "idle", "runnable", "running", "syscall", "waiting", ... or "unknown". */
const char *hr_goroutine_status_name(uint64_t status);
/* How long goroutine g has waited when the heap was taken (ns), 0 if unknown. */
uint64_t hr_goroutine_waited_ns(const struct hr_dump_params *params, const struct hr_goroutine *g);

struct hr_frame {
	uint64_t sp;            /* lowest address of the frame */
	uint64_t depth;         /* 0 = top of stack (the running frame) */
	uint64_t child_sp;      /* sp of the frame it called, 0 for the top frame */
	struct hr_bytes contents;
	uint64_t entry_pc;
	uint64_t pc;
	uint64_t cont_pc;
	struct hr_bytes func_name;
	uint32_t goroutine;     /* index into hr_dump_goroutines() */
	uint64_t bits_index;    /* first bit of this frame in hr_dump_frame_bits() */
};

/* Registered (kind 7) and queued (kind 11) finalizers share a layout. */
struct hr_finalizer {
	uint64_t obj;
	uint64_t fn;            /* FuncVal */
	uint64_t fn_pc;
	uint64_t arg_type;
	uint64_t obj_type;
};

struct hr_itab {
	uint64_t addr;
	uint64_t type_addr;
};

struct hr_os_thread {
	uint64_t addr;
	uint64_t id;
	uint64_t os_id;
};

struct hr_other_root {
	struct hr_bytes description;
	uint64_t ptr;
};

/*
 * A root given as one pointer and where it was found: the stack root and data root
 * records of the pre-release go1.3 layout (docs/heap-dumps.md), which has no data or
 * bss segment and no frame contents. Data roots come first, in the order of the file,
 * then stack roots in the order of their goroutines' frames.
 */
#define HR_NO_FRAME UINT32_MAX
struct hr_root_pointer {
	uint64_t addr;          /* where the pointer was found (a global's, a frame's word) */
	uint64_t ptr;
	uint32_t frame;         /* a stack root's frame, index into hr_dump_frames(); or
				 * HR_NO_FRAME for a data root */
};

struct hr_memprof_frame {
	struct hr_bytes func;   /* the function whose code is at file:line */
	struct hr_bytes file;
	uint64_t line;
	bool inlined;           /* the compiler inlined func into the next frame's function */
};

/* A memory-profile bucket: an allocation site (stack) and its counts. */
struct hr_memprof_bucket {
	uint64_t id;
	uint64_t size;
	uint32_t first_frame;   /* index into hr_dump_memprof_frames() */
	uint32_t frame_count;
	uint64_t allocs;
	uint64_t frees;
};

struct hr_alloc_sample {
	uint64_t addr;
	uint64_t bucket_id;
};

struct hr_dump;

/* Unmaps and frees everything; NULL is fine. */
void hr_dump_free(struct hr_dump *dump);

const char *hr_dump_path(const struct hr_dump *dump);
uint64_t hr_dump_file_size(const struct hr_dump *dump);
const struct hr_dump_params *hr_dump_params(const struct hr_dump *dump);
/* How many records of each kind the file holds (kind < HR_REC_KIND_COUNT). */
uint64_t hr_dump_record_count(const struct hr_dump *dump, unsigned kind);

/* Reads the pointer-sized word at p (inside the mapping), in the dump's byte order. */
uint64_t hr_dump_word(const struct hr_dump *dump, const uint8_t *p);

/* --- heap objects, sorted by address ---------------------------------------------- */
size_t hr_dump_object_count(const struct hr_dump *dump);
struct hr_object hr_dump_object(const struct hr_dump *dump, size_t index);
/* Index of the object whose [addr, addr+size) contains addr, or -1. O(1) in heap size. */
int64_t hr_dump_object_at(const struct hr_dump *dump, uint64_t addr);
/* hr_dump_object_at(), also saying whether the object found surely holds no pointer word
 * (hr_dump_span_pointer_free()). */
int64_t hr_dump_object_leaf_at(const struct hr_dump *dump, uint64_t addr, bool *pointer_free);
/* The offset of the first pointer word of object holder that points into object target. */
bool hr_dump_word_into(const struct hr_dump *dump, uint32_t holder, uint32_t target,
		       uint64_t *offset);
/*
 * Whether frame f is of the function the root `root` is named after: "main.handler" of
 * main.handler.buf (a frame variable: the function and one more name), main.main.func1
 * of main.main.func1.x, or the function itself (its frame words without a variable).
 */
bool hr_frame_holds_root(const struct hr_frame *f, const char *root);
/*
 * The goroutine (index in hr_dump_goroutines()) one of whose frames of the function the
 * root variable `root` is named after (hr_frame_holds_root()) holds a word pointing into
 * heap object obj; -1 when none does (the root is no frame's).
 */
int64_t hr_dump_frame_goroutine(const struct hr_dump *dump, const char *root, uint32_t obj);
/*
 * hr_dump_object_at(), also giving the object's start address and size (untouched when
 * -1): cheaper than hr_dump_object() afterwards, as most pages compute them from their
 * grid of one size without reading the object table.
 */
int64_t hr_dump_object_span_at(const struct hr_dump *dump, uint64_t addr, uint64_t *start,
			       uint64_t *size);
/*
 * Whether the object at [start, start + size) (as hr_dump_object_span_at() gave it)
 * surely holds no pointer word: it lies in one heap page, which holds none (Go keeps
 * objects without pointers in spans of their own). False when it may hold some. One
 * page lookup, of the page just looked up.
 */
bool hr_dump_span_pointer_free(const struct hr_dump *dump, uint64_t start, uint64_t size);
/*
 * Prefetching, for a caller that knows which objects it will read next (the scanner's
 * queue): each stage starts loading what the next stage or the reading needs, so the
 * stages of one object should be some tens of nanoseconds apart, in this order. Hints
 * only: nothing changes, whatever the order.
 */
enum hr_prefetch_stage {
	HR_PREFETCH_ENTRY,    /* the object's table entry */
	HR_PREFETCH_CONTENTS, /* its contents at offset, and its page's entry (reads the entry) */
	HR_PREFETCH_BITS,     /* its first pointer bits (reads the page entry) */
};
void hr_dump_prefetch_object(const struct hr_dump *dump, size_t index, uint64_t offset,
			     enum hr_prefetch_stage stage);
/* Whether the heap word at addr (pointer-aligned, inside an object) holds a pointer. */
bool hr_dump_heap_ptr_bit(const struct hr_dump *dump, uint64_t addr);
/*
 * Copies the pointer bits of object index to out, bit i for the word at addr + i *
 * ptr_size; out holds hr_bit_words(size / ptr_size) words. Cost: one page lookup per
 * 8 KiB of the object, then word-wide copies.
 */
void hr_dump_object_ptr_bits(const struct hr_dump *dump, size_t index, uint64_t *out);
/*
 * The same for the nwords heap words from addr (pointer-aligned), which need not be one
 * object: hr_dump_object_ptr_bits() for a caller that has the object already.
 */
void hr_dump_ptr_bits_at(const struct hr_dump *dump, uint64_t addr, uint64_t nwords,
			 uint64_t *out);
/* Number of pointer words in object index (counts set bits, page by page). */
uint64_t hr_dump_object_ptr_count(const struct hr_dump *dump, size_t index);
/* Pointer words in the whole heap. */
uint64_t hr_dump_heap_ptr_words(const struct hr_dump *dump);
/* Sum of all object sizes. */
uint64_t hr_dump_object_bytes(const struct hr_dump *dump);

/* --- roots and the rest ------------------------------------------------------------- */
const struct hr_segment *hr_dump_data(const struct hr_dump *dump);
const struct hr_segment *hr_dump_bss(const struct hr_dump *dump);

const struct hr_goroutine *hr_dump_goroutines(const struct hr_dump *dump, size_t *count);
const struct hr_frame *hr_dump_frames(const struct hr_dump *dump, size_t *count);
/* Whether word `word` of frame f (offset word * ptr_size from its sp) holds a pointer. */
bool hr_dump_frame_ptr_bit(const struct hr_dump *dump, const struct hr_frame *f, uint64_t word);

const struct hr_finalizer *hr_dump_finalizers(const struct hr_dump *dump, size_t *count);
const struct hr_finalizer *hr_dump_queued_finalizers(const struct hr_dump *dump, size_t *count);
const struct hr_itab *hr_dump_itabs(const struct hr_dump *dump, size_t *count);
const struct hr_os_thread *hr_dump_os_threads(const struct hr_dump *dump, size_t *count);
const struct hr_other_root *hr_dump_other_roots(const struct hr_dump *dump, size_t *count);
const struct hr_root_pointer *hr_dump_root_pointers(const struct hr_dump *dump, size_t *count);
const struct hr_memprof_bucket *hr_dump_memprof_buckets(const struct hr_dump *dump, size_t *count);
const struct hr_memprof_frame *hr_dump_memprof_frames(const struct hr_dump *dump, size_t *count);
const struct hr_alloc_sample *hr_dump_alloc_samples(const struct hr_dump *dump, size_t *count);
/*
 * The frames of bucket b a heap profile shows, as runtime/pprof shows them: the
 * runtime's own frames at the top of the stack left out (all kept when nothing else is
 * below them), and runtime.goexit at its bottom. *first indexes hr_dump_memprof_frames();
 * *count of them, the allocating function first.
 */
void hr_dump_memprof_shown(const struct hr_dump *dump, const struct hr_memprof_bucket *b,
			   uint32_t *first, uint32_t *count);

/* --- the model built by another front end ------------------------------------------ */
/*
 * struct hr_dump is the model every later stage reads, whatever the heap came from. The
 * core reader (core.h) builds one through these calls instead of parsing records:
 *
 *     d = hr_dump_build_begin(name, map, len, true, &params, err);
 *     hr_dump_build_object(d, addr, size, contents); then hr_dump_build_ptr() per pointer word
 *     hr_dump_build_segment(), hr_dump_build_goroutine() + its hr_dump_build_frame()s, ...
 *     hr_dump_build_finish(d, err);                 sorts and indexes; or hr_dump_free(d)
 *
 * map is the file the memory images live in (object contents point into it, or into
 * memory the model owns, hr_dump_build_memory()); with owns_map, hr_dump_free() unmaps it. Strings passed in are copied into the model. Record
 * counts (hr_dump_record_count()) count what was built, by the kind of record a dump would
 * have used. All return 0 or HR_ENOMEM/HR_EINPUT with err naming `name`; begin returns
 * NULL (HR_EUSAGE, the mapping unmapped if owned) for a pointer size other than 4 or 8.
 */
struct hr_dump *hr_dump_build_begin(const char *name, const uint8_t *map, size_t map_len,
				    bool owns_map, const struct hr_dump_params *params,
				    struct hr_error *err);
/*
 * len bytes of zeroed memory the model owns (it frees them), for contents a front end
 * copies because the file does not hold them in one piece; NULL when out of memory.
 */
uint8_t *hr_dump_build_memory(struct hr_dump *d, uint64_t len, struct hr_error *err);
/*
 * A heap object of size bytes at addr whose contents are at `contents`: inside the
 * mapping the model was begun over, or inside memory from hr_dump_build_memory()
 * (HR_EUSAGE otherwise).
 */
int hr_dump_build_object(struct hr_dump *d, uint64_t addr, uint64_t size,
			 const uint8_t *contents, struct hr_error *err);
/* Marks the pointer-aligned word at addr, inside the object built last, as a pointer. */
int hr_dump_build_ptr(struct hr_dump *d, uint64_t addr, struct hr_error *err);
/* Data (is_data) or bss: its image (inside map) and pointer bits (copied). */
int hr_dump_build_segment(struct hr_dump *d, bool is_data, uint64_t addr, struct hr_bytes contents,
			  const uint64_t *ptr_bits, struct hr_error *err);
/* A copy of s in the model, for names and wait reasons; .ptr NULL when out of memory. */
struct hr_bytes hr_dump_build_string(struct hr_dump *d, const char *s, size_t len);
/* A goroutine; its frames follow, top first (first_frame/frame_count are filled in). */
int hr_dump_build_goroutine(struct hr_dump *d, const struct hr_goroutine *g, struct hr_error *err);
/* The goroutine built last could be unwound only in part (its partial_stack). */
void hr_dump_build_partial_stack(struct hr_dump *d);
/* A frame of the goroutine built last, with one pointer bit per word of its contents. */
int hr_dump_build_frame(struct hr_dump *d, const struct hr_frame *f, const uint64_t *ptr_bits,
			struct hr_error *err);
int hr_dump_build_finalizer(struct hr_dump *d, bool queued, const struct hr_finalizer *f,
			    struct hr_error *err);
/* A memory-profile bucket with its b->frame_count frames (strings already in the model;
 * first_frame is filled in). */
int hr_dump_build_memprof(struct hr_dump *d, const struct hr_memprof_bucket *b,
			  const struct hr_memprof_frame *frames, struct hr_error *err);
int hr_dump_build_alloc_sample(struct hr_dump *d, const struct hr_alloc_sample *s,
			       struct hr_error *err);
/*
 * Names frame index of hr_dump_memprof_frames() func (copied), inlined into the next
 * frame's function: for a front end that learns it after the frames (dump.h,
 * hr_dump_name_inlined()). HR_ENOMEM, or HR_EUSAGE for an index past the frames.
 */
int hr_dump_build_frame_name(struct hr_dump *d, size_t index, const char *func, size_t len,
			     bool inlined, struct hr_error *err);
int hr_dump_build_itab(struct hr_dump *d, const struct hr_itab *it, struct hr_error *err);
int hr_dump_build_os_thread(struct hr_dump *d, const struct hr_os_thread *t, struct hr_error *err);
/* Replaces the params given to hr_dump_build_begin() (the heap range is known last). */
void hr_dump_build_params(struct hr_dump *d, const struct hr_dump_params *params);
/* Ends the building: sorts and indexes the objects (HR_EINPUT if two overlap). */
int hr_dump_build_finish(struct hr_dump *d, struct hr_error *err);

/* Sets the caveat: one sentence on what the front end could not read exactly (copied). */
void hr_dump_build_caveat(struct hr_dump *d, const char *text);

/* --- where the model came from ------------------------------------------------------ */
enum hr_source {
	HR_SOURCE_DUMP,    /* a heap dump (runtime/debug.WriteHeapDump), dump.h */
	HR_SOURCE_CORE,    /* a core file, core.h */
	HR_SOURCE_PROCESS, /* a live process, through the core heapref took of it (--pid) */
};

struct hr_provenance {
	enum hr_source source;
	/* The Go release that wrote the heap ("go1.26.8"): a dump's params record, or the
	 * binary a core was read with; "" when unknown (go1.3 and go1.4 dumps record none) */
	const char *go_version;
	unsigned dump_format;    /* the N of a dump's "go1.N heap dump" header; 0 for a core */
	bool prerelease;         /* go1.3 in the layout before Go 1.3's release (seed 002) */
	const char *caveat;      /* one sentence on what could not be read exactly, or "" */
};
const struct hr_provenance *hr_dump_provenance(const struct hr_dump *dump);
/*
 * What the heap is, in a few words, into buf: "go1.26.8 amd64 dump", "go1.26.8 arm64
 * core", "go1.26.8 amd64 process"; a go1.3 or go1.4 dump by its format, "go1.4 amd64
 * dump".
 */
void hr_dump_describe(const struct hr_dump *dump, char *buf, size_t len);
/* Sets where the model came from (a core; a process) and the Go release (copied). */
int hr_dump_build_provenance(struct hr_dump *d, enum hr_source source, const char *go_version,
			     struct hr_error *err);

/* Bytes of memory the index holds (not counting the mapping), for benchmarks. */
uint64_t hr_dump_index_bytes(const struct hr_dump *dump);

#endif
