/* SPDX-License-Identifier: Apache-2.0 */
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
 * Lifecycle: hr_scan_new(), [hr_scan_keep_paths() and the other keep_ calls],
 * hr_scan_pass1(), hr_scan_pass2(), hr_scan_take_result(), hr_scan_free(). The scan
 * borrows the dump, the binary and the tree; they must outlive it. What it found is its
 * result (result.h), which the later stages read: never the scan itself.
 */
#ifndef HEAPREF_SCAN_H
#define HEAPREF_SCAN_H

#include <stdbool.h>
#include <stdint.h>

#include "heapref/base.h"
#include "heapref/binary.h"
#include "heapref/chains.h"
#include "heapref/dump.h"
#include "heapref/result.h"

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
 * to and, with holders, the object holding the pointer that reached it, for
 * hr_result_reached_by(): the path by which each object is kept alive. Costs 4 bytes
 * per heap object, 8 with holders. Call before pass 1. 0, or HR_ENOMEM with err set.
 */
int hr_scan_keep_paths(struct hr_scan *scan, bool holders, struct hr_error *err);

/*
 * Asks the scan to record every root word it follows, typed or not, as an edge from the
 * root (the chain tree's root node of the word's chain) to the heap object the word
 * leads to, for the dominator tree (dominators.h): whether or not the object was
 * reached first through it. Costs 8 bytes per such word. Call before pass 1. Roots
 * whose words all lead to objects reached before get a chain node of their own (with
 * nothing charged to it). 0, or HR_ENOMEM with err set.
 */
int hr_scan_keep_root_edges(struct hr_scan *scan, struct hr_error *err);

/*
 * Asks the scan to remember the type by which the typed walk read each object (the
 * view of the pointer that reached it first: T, or an array of T for a slice's backing
 * array), for hr_result_type_of(). 4 bytes per heap object. Call before pass 1.
 */
int hr_scan_keep_types(struct hr_scan *scan, struct hr_error *err);

/*
 * Asks the scan to count, as it charges each object, which goroutine's stack reached it
 * first (that goroutine's frames, or an object they reached first), by chain node:
 * hr_result_shares() gives the counts. The goroutine travels with the work
 * (queue items, pass 2's drains): no table per object. Call before pass 1.
 */
int hr_scan_keep_goroutines(struct hr_scan *scan, struct hr_error *err);

/*
 * Has pass 1 call fn(ctx, scan) once it has walked the roots, before its walk of the
 * heap, on the thread that runs pass 1: what the roots' walk found can be read then
 * (hr_scan_root_edges_so_far()), for work that can start before the scan ends.
 */
typedef void (*hr_scan_roots_fn)(void *ctx, const struct hr_scan *scan);
void hr_scan_on_roots_walked(struct hr_scan *scan, hr_scan_roots_fn fn, void *ctx);

/*
 * The root edges (hr_scan_keep_root_edges()) that the result will hold if the rest of
 * the scan finds no more: those recorded so far, then those pass 2 will record for the
 * root words taken so far, in hr_result_root_edges()'s order. Between the passes'
 * steps, on the scan's thread (fn above). A new array in *edges, for the caller to
 * free; 0 or HR_ENOMEM.
 */
int hr_scan_root_edges_so_far(const struct hr_scan *scan, struct hr_root_edge **edges,
			      size_t *n);

/* Pass 1: the roots and the typed walk. 0 or a negative HR_E* (err set). */
int hr_scan_pass1(struct hr_scan *scan, struct hr_error *err);
/* Pass 2: the bitmap fallback from every unticked pointer word. 0 or a negative HR_E*. */
int hr_scan_pass2(struct hr_scan *scan, struct hr_error *err);

/* The counts so far (after pass 2: of the whole scan, as hr_result_summary()'s). */
const struct hr_scan_summary *hr_scan_summary(const struct hr_scan *scan);

/*
 * After both passes: what the scan found (the summary, and what it was asked to keep:
 * paths, types, root edges, goroutines' shares) moved into a result that outlives the
 * scan (result.h); free the scan then, and hand the result to the views and writers.
 * The caller frees it with hr_result_free(). NULL (err set) when out of memory.
 */
struct hr_scan_result *hr_scan_take_result(struct hr_scan *scan, struct hr_error *err);

#endif
