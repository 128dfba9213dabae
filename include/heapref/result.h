/* SPDX-License-Identifier: Apache-2.0 */
/*
 * result.h - what a scan found (scan.h's hr_scan_take_result()), in a form that outlives
 * the scan: the views (views.h), the dominator tree (dominators.h) and the writers
 * (writers.h) read this, never the scan engine.
 *
 * It holds the summary of the scan (roots walked, objects and bytes reached by type and
 * by bitmap, what no root reaches), and what the scan was asked to keep:
 *   - for each heap object, the chain node it is charged to and the object whose word
 *     reached it (hr_scan_keep_paths());
 *   - for each heap object, the type the typed walk read it as (hr_scan_keep_types());
 *   - the edges from each root to the objects its words lead to (hr_scan_keep_root_edges());
 *   - what each goroutine's stack reached first of each chain node's objects
 *     (hr_scan_keep_goroutines()).
 * What was not kept reads as nothing: no path, type 0, no edges, no shares.
 */
#ifndef HEAPREF_RESULT_H
#define HEAPREF_RESULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "heapref/base.h"
#include "heapref/model.h"

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
	uint64_t split_runs;     /* long runs of elements (a []*T of thousands) queued in pieces */
	uint64_t pieces;         /* the pieces they were queued in */
	unsigned go_minor;       /* the N of the dump's go1.N build version, 0 unknown */
};

#define HR_SCAN_BY_ROOT UINT32_MAX           /* holder: a root's word reached the object */
#define HR_SCAN_NOT_REACHED (UINT32_MAX - 1) /* holder: no root reaches the object */
#define HR_SCAN_HOLDER_UNKNOWN (UINT32_MAX - 2) /* holder: reached, holders not kept */

struct hr_reached_by {
	uint32_t node;   /* the chain node it is charged to; HR_CHAINS_NONE if not reached */
	uint32_t holder; /* the heap object (index) whose word reached it, or one of the above */
};

struct hr_root_edge {
	uint32_t node; /* the root's chain node */
	uint32_t obj;  /* heap object index */
};

/* What a goroutine's stack reached first of a chain node's own objects. */
struct hr_goroutine_share {
	uint32_t node;
	uint32_t goroutine;  /* index in hr_dump_goroutines() + 1 */
	uint64_t objects, bytes;
};

struct hr_scan_result;

void hr_result_free(struct hr_scan_result *r);

const struct hr_scan_summary *hr_result_summary(const struct hr_scan_result *r);

/* Heap objects the scan saw (the dump's), the range of obj below. */
size_t hr_result_object_count(const struct hr_scan_result *r);

/* Whether paths were kept: hr_result_reached_by() says something. */
bool hr_result_has_paths(const struct hr_scan_result *r);

/*
 * How object obj (a heap object index) was reached (paths kept). Following holders
 * from an object ends at a root in at most as many steps as there are objects: each
 * object's holder was reached before it. { HR_CHAINS_NONE, HR_SCAN_NOT_REACHED } when
 * it was not, or when paths were not kept.
 */
struct hr_reached_by hr_result_reached_by(const struct hr_scan_result *r, uint32_t obj);

/*
 * The type id by which the typed walk read object obj (0: reached by bitmap only, or
 * types not kept); *array set when it was read as an array of that type (a slice's
 * backing array).
 */
uint32_t hr_result_type_of(const struct hr_scan_result *r, uint32_t obj, bool *array);
/*
 * For a closure (an object a func value points to, walked by its function's captured
 * variables; hr_result_type_of() says 0): the index of that function in the binary
 * (hr_binary_func()); -1 for any other object, or types not kept.
 */
int64_t hr_result_closure_of(const struct hr_scan_result *r, uint32_t obj);
/*
 * Where in heap object obj the value the typed walk read starts: after its malloc header
 * (Go 1.22 and later: an object with pointers of 513 bytes to 32 KiB), else 0.
 */
uint64_t hr_result_value_offset(const struct hr_scan_result *r, const struct hr_dump *d,
				uint32_t obj);
/*
 * The word at offset off of heap object obj as the type the typed walk read it as names
 * it ("[12].Prev", hr_binary_name_offset(), counted from hr_result_value_offset()) into
 * buf; "" when the walk read it by no type, types were not kept, or bin is NULL.
 */
struct hr_binary;
const char *hr_result_word_name(const struct hr_scan_result *r, const struct hr_dump *d,
				const struct hr_binary *bin, uint32_t obj, uint64_t off, char *buf,
				size_t cap);
/* Whether obj is the bytes of a string the typed walk read (hr_result_type_of() says 0). */
bool hr_result_is_string_data(const struct hr_scan_result *r, uint32_t obj);

/* The root edges recorded (NULL, 0 if not kept). Owned by the result. */
const struct hr_root_edge *hr_result_root_edges(const struct hr_scan_result *r, size_t *n);

/* The shares of every chain node by goroutine, sorted by node then goroutine (NULL, 0
 * if not kept). Owned by the result. */
const struct hr_goroutine_share *hr_result_shares(const struct hr_scan_result *r, size_t *n);

#endif
