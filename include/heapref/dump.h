/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dump.h - the dump reader: stage 1 of the pipeline.
 *
 * Reads a Go heap dump (runtime/debug.WriteHeapDump; header "go1.5 heap dump\n",
 * "go1.6 ..." or "go1.7 ...": current Go still writes go1.7; and the older "go1.3 ..."
 * and "go1.4 ..." layouts, whose records also name types) and indexes it so that later
 * stages never parse it again: it builds the heap model (model.h), and keeps beside it
 * what only a dump has (below): its format, memstats, defers and panics, and the type
 * records of go1.3 and go1.4 dumps.
 *
 * The file is memory-mapped and stays mapped while the model lives: contents, names and
 * strings point into the mapping rather than being copied.
 *
 * Every record is checked as it is read; a malformed dump fails with one error line
 * "FILE: byte OFFSET: what is wrong" and nothing is returned. No allocation is sized by
 * a length field of the file before that length has been checked against the file.
 */
#ifndef HEAPREF_DUMP_H
#define HEAPREF_DUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "heapref/base.h"
#include "heapref/model.h"

struct hr_type_record {
	uint64_t addr;
	uint64_t size;
	struct hr_bytes name;
	bool data_is_ptr;       /* an interface holding it stores *T (true) or T in its data word */
};

struct hr_defer {
	uint64_t addr;
	uint64_t goroutine;
	uint64_t argp;
	uint64_t pc;
	uint64_t fn;
	uint64_t fn_pc;
	uint64_t link;
};

struct hr_panic {
	uint64_t addr;
	uint64_t goroutine;
	uint64_t arg_type;
	uint64_t arg_data;
	uint64_t defer;
	uint64_t link;
};

/* runtime.MemStats as the dump records it, in its field order. */
struct hr_memstats {
	uint64_t alloc, total_alloc, sys, lookups, mallocs, frees;
	uint64_t heap_alloc, heap_sys, heap_idle, heap_inuse, heap_released, heap_objects;
	uint64_t stack_inuse, stack_sys, mspan_inuse, mspan_sys, mcache_inuse, mcache_sys;
	uint64_t buck_hash_sys, gc_sys, other_sys, next_gc, last_gc, pause_total_ns;
	uint64_t pause_ns[256];
	uint64_t num_gc;
};

/*
 * Maps and indexes the dump at path. Returns NULL on failure with err set
 * (HR_EIO: cannot open or map; HR_EINPUT: not a well-formed dump; HR_ENOMEM).
 * The caller owns the result and frees it with hr_dump_free().
 */
struct hr_dump *hr_dump_open(const char *path, struct hr_error *err);

/*
 * Same, on bytes already in memory (tests, fuzzing). name is used in error messages.
 * The buffer is not copied: it must outlive the returned dump.
 */
struct hr_dump *hr_dump_open_bytes(const void *bytes, size_t len, const char *name,
				   struct hr_error *err);

struct hr_binary;
/*
 * Names the memory profile's frames after the functions the compiler inlined there, as
 * bin's function table (its inline tree) says (dump_inline.c): the dump names each PC
 * after the function whose code holds it. bin must be the binary that wrote the dump;
 * one whose function table this code does not read (Go before 1.18: a go1.3 or go1.4
 * dump's) leaves the dump's names. HR_ENOMEM is the only failure.
 */
int hr_dump_name_inlined(struct hr_dump *d, const struct hr_binary *bin, struct hr_error *err);

/* 3 to 7: the N of the "go1.N heap dump" header (3 and 4: see dump_legacy.c's layouts);
 * 0 for a model a dump did not build. */
unsigned hr_dump_format_minor(const struct hr_dump *dump);
/* --- what only a dump has --------------------------------------------------------- */
/* Where the params record starts in the file. */
uint64_t hr_dump_params_offset(const struct hr_dump *dump);
/* go1.3 and go1.4 dumps: the GOEXPERIMENT their params record holds (empty otherwise). */
struct hr_bytes hr_dump_goexperiment(const struct hr_dump *dump);
const struct hr_type_record *hr_dump_types(const struct hr_dump *dump, size_t *count);
const struct hr_defer *hr_dump_defers(const struct hr_dump *dump, size_t *count);
const struct hr_panic *hr_dump_panics(const struct hr_dump *dump, size_t *count);
/* NULL when the dump has no memstats record. */
const struct hr_memstats *hr_dump_memstats(const struct hr_dump *dump);
/*
 * How the dump's records were read (for --stats). From 64 MiB, a second thread reads
 * the second half from second_at, a record's start found by looking; if that was no
 * record's start, the first thread read on alone (second_kept false). When the second
 * thread was done first, it may have taken on the first's rest from steal_at (0: no
 * such steal; kept even when second_at's part was not). All 0 for a model a dump did
 * not build.
 */
struct hr_dump_reading {
	uint64_t second_at;   /* 0: one thread read it all */
	bool second_kept;
	uint64_t steal_at;
};
struct hr_dump_reading hr_dump_reading(const struct hr_dump *dump);

/* --- types the records give (go1.3 and go1.4 dumps) ----------------------------------- */
/*
 * Dumps before go1.5 name types: a go1.3 object record gives its object's type, and an
 * interface (in an object, frame or segment) whose type record is known gives the type
 * of what its data word points at. Analyses without the binary's DWARF name objects so.
 */
struct hr_object_type {
	const char *prefix;   /* "", "[]" (an array of them: a slice's backing array) or "chan " */
	struct hr_bytes name; /* as the type record spells it: "main.Entry", "map[string]int" */
};
/* Whether the dump's records can type objects at all (its format is go1.3 or go1.4). */
bool hr_dump_has_object_types(const struct hr_dump *dump);
/* The type of heap object index; false when the records say nothing of it. */
bool hr_dump_object_type(const struct hr_dump *dump, size_t index, struct hr_object_type *out);

#endif
