/*
 * scan.h - the scanner: stage 3 of the pipeline.
 *
 * Walks the heap of a dump from its roots and charges every reachable object, exactly
 * once, to a node of a chain tree (chains.h) named after the variables, fields, map
 * entries and elements that lead to it. Two passes (docs/analysis.md has the detail):
 *
 *   pass 1, typed: from each root variable (DWARF globals in the data and bss segments,
 *     goroutine frame variables, finalizers), follow the DWARF type of the memory: pointers,
 *     structs, arrays, slices, strings, interfaces (dynamic type from the type word or
 *     itab), maps (bucket maps up to Go 1.23, swiss tables from 1.24), channels, closures,
 *     sync/atomic.Pointer. Breadth first over all roots, so an object reachable from two
 *     variables is charged to the shorter chain. Every pointer word read this way is
 *     ticked off the GC's pointer bitmap of the object that holds it.
 *   pass 2, fallback: every pointer word left unticked (unsafe casts, unsafe.Pointer,
 *     memory outside the type an object was reached by, frame and data words no DWARF
 *     variable covers) is followed by the bitmaps alone, and what it reaches is charged
 *     under "$sub_objects$" below the node where the word was found (or to a root named
 *     after the frame's function or the ELF symbol holding the word).
 *
 * Only words the dump's bitmaps mark as pointers are ever followed, so what the profile
 * holds is exactly what is reachable from the roots by the bitmaps: the typed pass only
 * decides names.
 *
 * Lifecycle: hr_scan_new(), [hr_scan_keep_paths()], hr_scan_pass1(), hr_scan_pass2(),
 * hr_scan_summary(), [hr_scan_reached_by()], hr_scan_free(). The scan borrows the dump,
 * the binary and the tree; they must outlive it.
 */
#ifndef HEAPREF_SCAN_H
#define HEAPREF_SCAN_H

#include <stdbool.h>
#include <stdint.h>

#include "heapref/base.h"
#include "heapref/binary.h"
#include "heapref/chains.h"
#include "heapref/dump.h"

/* Called now and then while a pass runs: done out of total heap objects charged so far. */
typedef void (*hr_scan_progress_fn)(void *arg, const char *phase, uint64_t done, uint64_t total);

struct hr_scan_options {
	hr_scan_progress_fn progress; /* may be NULL */
	void *progress_arg;
	/* threads of pass 1's heap walk: 0, one per usable processor; the profile is the
	 * same with any number */
	unsigned threads;
	/* objects per share of pass 1's work given to a thread: 0, as the walk goes; tests
	 * set 1, which sends every object through the threads (even in a narrow walk) */
	unsigned chunk_objects;
	/* tests only: in a narrow walk, objects walked by one thread before a worker is
	 * given part of it to walk ahead (0: as the walk goes), and objects per share of
	 * that part (0: the usual) */
	unsigned stream_after, stream_chunk;
};

enum hr_root_kind {
	HR_ROOT_GLOBAL,          /* DWARF global variable in data or bss */
	HR_ROOT_FRAME_VAR,       /* goroutine frame variable (parameter or local) */
	HR_ROOT_FINALIZER,       /* registered finalizer: its function and what its object points to */
	HR_ROOT_QUEUED_FINALIZER,/* queued finalizer: object and function */
	HR_ROOT_OTHER,           /* "other root" records */
	HR_ROOT_FRAME_WORDS,     /* frame pointer words no DWARF variable covers */
	HR_ROOT_DATA_WORDS,      /* data/bss pointer words no global's DWARF type reads */
	HR_ROOT_KIND_COUNT
};

/* "global", "frame variable", ... */
const char *hr_root_kind_name(unsigned kind);

struct hr_scan_summary {
	uint64_t roots[HR_ROOT_KIND_COUNT];       /* roots that were walked, by kind */
	uint64_t typed_objects, typed_bytes;       /* reached in pass 1 */
	uint64_t fallback_objects, fallback_bytes; /* reached in pass 2 */
	uint64_t unreachable_objects, unreachable_bytes;
	uint64_t total_objects, total_bytes;       /* all objects in the dump */
	uint64_t header_typed;   /* objects typed by their malloc header (Go >= 1.22) */
	uint64_t skipped_vars;   /* frame variables in registers or unsupported locations */
	uint64_t static_objects; /* objects in data or bss outside every global, walked by type */
	unsigned pass1_threads;  /* threads that walked heap objects in pass 1 */
	uint64_t queued_objects; /* heap objects pass 1 queued to walk: those reached that may
				  * hold a pointer (the others' walk would do nothing) */
	uint64_t worker_objects; /* of those, walked by pass 1's workers (the rest: by the
				  * thread that applies their work, in order) */
	uint64_t streams;        /* times a narrow walk gave a worker part of it to walk ahead */
	uint64_t stream_objects; /* of worker_objects, walked ahead that way */
	uint64_t stream_stops;   /* streams stopped: a claim the rest of the walk made first */
	unsigned go_minor;       /* the N of the dump's go1.N build version, 0 unknown */
};

/* --- before scanning: do the inputs go together? ------------------------------------ */

/* The Go releases heapref is tested with (docs/go-versions.md). */
#define HR_GO_MINOR_OLDEST 19
#define HR_GO_MINOR_NEWEST 27

/*
 * Whether the dump can have been written by the binary: the same Go build version (when
 * both record one), data and bss segments of the sizes of the ELF's .data and .bss, at
 * the same distance from each other, and stack frames whose functions start where the
 * binary's symbols of those names do (where hr_scan_image() says the process loaded it).
 * False with every difference, as one line, in why.
 */
bool hr_scan_pair_matches(const struct hr_dump *dump, const struct hr_binary *bin, char *why,
			  size_t len);

/*
 * Whether a Go build version ("go1.26.8", not NUL-terminated) is one heapref is tested
 * with. False with a warning sentence in why when it is older, newer or unrecognised; an
 * empty version is not warned about.
 */
bool hr_scan_go_version_known(const char *version, size_t version_len, char *why, size_t len);

/*
 * Where the process of dump loaded bin: the load bias the front end found (a core's),
 * or the one the dump's data segment gives against the binary's .data; 0 when neither
 * can tell. HR_EINPUT when the binary's addresses would wrap at that bias.
 */
int hr_scan_image(const struct hr_dump *dump, const struct hr_binary *bin, struct hr_image *out,
		  struct hr_error *err);

struct hr_scan;

/*
 * Prepares a scan: checks that dump and binary can be used together (pointer size,
 * byte order), works out where the process loaded the binary (hr_scan_image()), and
 * allocates the visited bits. NULL with err set on failure (HR_EINPUT, HR_ENOMEM). bin
 * is read, never changed: scans of several heaps may share it.
 */
struct hr_scan *hr_scan_new(const struct hr_dump *dump, const struct hr_binary *bin,
			    struct hr_chains *tree, const struct hr_scan_options *opts,
			    struct hr_error *err);
void hr_scan_free(struct hr_scan *scan);

/*
 * Asks the scan to remember, for every object it charges, the chain node it charges it
 * to and the object holding the pointer that reached it, for hr_scan_reached_by(): the
 * path by which each object is kept alive. Costs 8 bytes per heap object. Call before
 * pass 1. 0, or HR_ENOMEM with err set.
 */
int hr_scan_keep_paths(struct hr_scan *scan, struct hr_error *err);

#define HR_SCAN_BY_ROOT UINT32_MAX           /* holder: a root's word reached the object */
#define HR_SCAN_NOT_REACHED (UINT32_MAX - 1) /* holder: no root reaches the object */

struct hr_reached_by {
	uint32_t node;   /* the chain node it is charged to; HR_CHAINS_NONE if not reached */
	uint32_t holder; /* the heap object (index) whose word reached it, or one of the above */
};

/*
 * How object obj (a heap object index) was reached, after the passes of a scan that
 * keeps paths. Following holders from an object ends at a root in at most as many steps
 * as there are objects: each object's holder was reached before it.
 */
struct hr_reached_by hr_scan_reached_by(const struct hr_scan *scan, uint32_t obj);

/*
 * Asks the scan to record every root word it follows, typed or not, as an edge from the
 * root (the chain tree's root node of the word's chain) to the heap object the word
 * leads to, for the dominator tree (dominators.h): whether or not the object was
 * reached first through it. Costs 8 bytes per such word. Call before pass 1. Roots
 * whose words all lead to objects reached before get a chain node of their own (with
 * nothing charged to it). 0, or HR_ENOMEM with err set.
 */
int hr_scan_keep_root_edges(struct hr_scan *scan, struct hr_error *err);

struct hr_root_edge {
	uint32_t node; /* the root's chain node */
	uint32_t obj;  /* heap object index */
};

/* The root edges recorded, after both passes (NULL, 0 if not kept). Owned by the scan. */
const struct hr_root_edge *hr_scan_root_edges(const struct hr_scan *scan, size_t *n);

/*
 * Offers every reached object to the tree as an example of the chain node it is charged
 * to (hr_chains_offer_example(); the tree keeps the biggest few of each), after both
 * passes of a scan that kept paths. 0, or HR_ENOMEM with err set.
 */
int hr_scan_offer_examples(const struct hr_scan *scan, struct hr_chains *tree,
			   struct hr_error *err);

/*
 * The chain tree with allocation sites (analyze --by-alloc): a copy of from (the scan's
 * tree) in which each reached object the dump's memory profile sampled (alloc sample
 * records, kind 17) is charged below its chain to the frames of the stack that
 * allocated it, one node per frame named "@ FUNCTION", the allocating function first
 * (leading runtime frames and runtime.goexit left out, as runtime/pprof does); the
 * others stay on their chain. After both passes of a scan that kept paths. max_depth
 * and fold_recursion as for the scan's tree. The caller frees it; NULL (err set) when
 * out of memory.
 */
struct hr_chains *hr_scan_chains_by_alloc(const struct hr_scan *scan, const struct hr_chains *from,
					  uint32_t max_depth, bool fold_recursion,
					  struct hr_error *err);

/*
 * Asks the scan to remember the type by which the typed walk read each object (the
 * view of the pointer that reached it first: T, or an array of T for a slice's backing
 * array), for hr_scan_chains_by_type(). 4 bytes per heap object. Call before pass 1.
 */
int hr_scan_keep_types(struct hr_scan *scan, struct hr_error *err);

/*
 * The type id by which the typed walk read object obj (0: reached by bitmap only, or
 * types not kept); *array set when it was read as an array of that type (a slice's
 * backing array). After both passes of a scan that kept types.
 */
uint32_t hr_scan_type_of(const struct hr_scan *scan, uint32_t obj, bool *array);

/*
 * The chain tree along the type axis (analyze --by-type), after both passes of a scan
 * that kept paths and types: a copy of from in which each object is charged below its
 * chain to a node naming its type, "type main.Item", "type []uint8" (an array of
 * uint8: a slice's backing array), "type ?" (reached by bitmap only). With types_first,
 * the transposed tree: the types are the roots, and below each the chains holding
 * objects of it. max_depth and fold_recursion as for the scan's tree. The caller frees
 * it; NULL (err set) when out of memory.
 */
struct hr_chains *hr_scan_chains_by_type(const struct hr_scan *scan, const struct hr_chains *from,
					  bool types_first, uint32_t max_depth,
					  bool fold_recursion, struct hr_error *err);

/*
 * Asks the scan to count, as it charges each object, which goroutine's stack reached it
 * first (that goroutine's frames, or an object they reached first), by chain node:
 * hr_scan_goroutine_shares() gives the counts. The goroutine travels with the work
 * (queue items, pass 2's drains): no table per object. Call before pass 1.
 */
int hr_scan_keep_goroutines(struct hr_scan *scan, struct hr_error *err);

/* What a goroutine's stack reached first of a chain node's own objects. */
struct hr_goroutine_share {
	uint32_t node;
	uint32_t goroutine;  /* index in hr_dump_goroutines() + 1 */
	uint64_t objects, bytes;
};

/*
 * The shares of every chain node by goroutine, sorted by node then goroutine, after both
 * passes of a scan that kept goroutines; *shares is the caller's to free.
 * 0, or HR_ENOMEM with err set.
 */
int hr_scan_goroutine_shares(const struct hr_scan *scan, struct hr_goroutine_share **shares,
			     size_t *n, struct hr_error *err);

/* Pass 1: the roots and the typed walk. 0 or a negative HR_E* (err set). */
int hr_scan_pass1(struct hr_scan *scan, struct hr_error *err);
/* Pass 2: the bitmap fallback from every unticked pointer word. 0 or a negative HR_E*. */
int hr_scan_pass2(struct hr_scan *scan, struct hr_error *err);

const struct hr_scan_summary *hr_scan_summary(const struct hr_scan *scan);

#endif
