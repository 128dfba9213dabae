/* SPDX-License-Identifier: Apache-2.0 */
/*
 * writers.h - the last pipeline stage: turning what the earlier stages found into
 * output a person or a tool reads.
 *
 * The text views of a dump behind `heapref info` and `heapref object`, and the chain
 * tree as a pprof profile or as a condensed text report; how the chains of two dumps
 * differ; why one object is alive.
 */
#ifndef HEAPREF_WRITERS_H
#define HEAPREF_WRITERS_H

#include <stdio.h>

#include "heapref/binary.h"
#include "heapref/chains.h"
#include "heapref/dominators.h"
#include "heapref/dump.h"
#include "heapref/leaks.h"
#include "heapref/result.h"
#include "heapref/suspects.h"

/*
 * Writes a readable summary of the dump to out: Go version and GOARCH, record counts,
 * objects and bytes with a histogram by size, goroutines by status and wait reason,
 * data/bss sizes, finalizers, memstats HeapAlloc next to the sum of object sizes.
 * Returns 0, or HR_EIO (err set) when writing fails.
 */
int hr_write_dump_info(FILE *out, const struct hr_dump *dump, struct hr_error *err);

/*
 * Writes which heap object contains addr (interior pointers too): its address, size
 * and pointer words with where each points; or that no object contains it.
 * Shows at most max_ptrs pointer words. Returns 0, or HR_EIO when writing fails.
 */
int hr_write_object_at(FILE *out, const struct hr_dump *dump, uint64_t addr,
		       unsigned max_ptrs, struct hr_error *err);

/*
 * What a profile says of the binary: mapping 1's file name and build ID (NULL: none);
 * and, for hr_write_pprof(), the shares of chain nodes that goroutines' stacks reached
 * (hr_result_shares(), sorted by node), each written as a sample of its own
 * labelled with its goroutine's id, creator (creator(creator_ctx, gopc): the name of the
 * function at that PC), status and wait reason (shares NULL: none).
 */
struct hr_pprof_options {
	const char *binary;
	const char *build_id;
	const struct hr_goroutine_share *shares;
	size_t nshares;
	const struct hr_dump *dump;
	const char *(*creator)(void *creator_ctx, uint64_t gopc);
	void *creator_ctx;
	const uint8_t *leaked;   /* per goroutine, enum hr_leak_verdict (leaks.h), or NULL */
};

/*
 * Writes the chain tree as a gzipped pprof profile to out: sample types
 * inuse_objects/count and inuse_space/bytes (the default), one sample per node with an
 * own value, its stack the chain from that node up to its root (leaf first), so pprof's
 * cumulative figure for a node is everything reached through it; each sample labelled
 * "root" with its chain's root variable (so `go tool pprof -tags` ranks the roots and
 * -tagfocus=root=NAME keeps one), and "examples" with the addresses of the node's
 * example objects if the tree keeps any. opt (may be NULL) names the binary in the
 * profile's mapping. Returns 0, HR_EIO when writing fails or HR_ENOMEM; err says which.
 */
int hr_write_pprof(FILE *out, const struct hr_chains *tree, const struct hr_pprof_options *opt,
		   struct hr_error *err);

/*
 * The same for the difference of two trees: new_tree's samples as they are and
 * old_tree's negated, as `go tool pprof -diff_base OLD NEW` shows them; pprof adds the
 * samples of each chain, so a chain's value is its growth.
 */
int hr_write_pprof_diff(FILE *out, const struct hr_chains *old_tree,
			const struct hr_chains *new_tree, const struct hr_pprof_options *opt,
			struct hr_error *err);

/*
 * Writes the classic heap profile of the dump's memory-profile records (kind 16): one
 * sample per allocation-site bucket with its stack (leading runtime frames left out, as
 * runtime/pprof does), values alloc_objects, alloc_space, inuse_objects and inuse_space
 * (the default; in use = allocations less frees as of the last completed GC, the
 * runtime's own figures), the object size as the numeric label "bytes". opt (may be
 * NULL) names the binary. Returns 0, HR_EIO or HR_ENOMEM.
 */
int hr_write_alloc_profile(FILE *out, const struct hr_dump *dump,
			   const struct hr_pprof_options *opt, struct hr_error *err);

/*
 * Writes the chain tree as a text report to out: a header, then one line per chain shown,
 * root first and indented by depth, with its cumulative bytes, share of all reachable
 * bytes and cumulative objects. Siblings come biggest first. A chain with less than
 * cutoff_percent of all reachable bytes is merged into its parent's `<other>` line; a
 * node whose children are shown gets a `<self>` line for its own value (when that is
 * big enough, or nothing is merged), so the lines directly under a node add up to it.
 * Returns 0, HR_EUSAGE for a cutoff outside 0..100, HR_EIO when writing fails or
 * HR_ENOMEM; err says which.
 */
int hr_write_chain_report(FILE *out, const struct hr_chains *tree, double cutoff_percent,
			  struct hr_error *err);

/*
 * Writes how the chains grew from the tree old to the tree new (two dumps, analysed alike)
 * as a text table to out: a header with both totals, then one line per chain whose value
 * changed or has a descendant whose value changed, root first and indented by depth, with
 * its growth in bytes and objects (new minus old, signed), its old and new bytes and
 * objects, and a mark: `new` for a chain that held nothing in old, `gone` for one that
 * holds nothing in new. Figures are cumulative; a line whose own value changed too gets a
 * `<self>` line below it, so the growth of the lines directly under a line adds up to its
 * growth. Siblings come biggest growth first. The trees are compared by chain (the names
 * from the root), not by node id. Returns 0, HR_EIO when writing fails or HR_ENOMEM.
 */
int hr_write_chain_diff(FILE *out, const struct hr_chains *old, const struct hr_chains *new,
			struct hr_error *err);

struct hr_path_options {
	unsigned paths;               /* paths to show (1: the one the analysis took) */
	struct hr_heap_graph *graph;  /* for paths beyond the first (NULL if paths <= 1) */
	const struct hr_image *img;   /* the binary where it ran, or NULL: for the names of
				       * fields (the scan must have kept types) and of the
				       * function that started a goroutine */
};

/*
 * Writes why the heap object containing addr is alive: the chain it is charged to, the
 * objects through which the analysis reached it from a root (path 1), then up to
 * opt->paths - 1 more paths, each a shortest path through none of the objects of the
 * paths before (saying so when no more exist); each object with its address, size, the
 * name of its chain node and its word pointing to the next: the offset, and, with
 * opt->img and the types kept, the field, element or index it is (`.Prev`, `[3]`,
 * `.slots[5].elem`). A root that is a goroutine's frame variable names the goroutine:
 * id, the function that started it, its status or wait reason. A path of
 * more than 16 objects shows 8 at each end. Or that no root reaches it, or that addr is
 * in no heap object: then *found is false. The scan must have kept paths
 * (hr_scan_keep_paths()) and run both passes. Returns 0, HR_EIO or HR_ENOMEM.
 */
int hr_write_path(FILE *out, const struct hr_dump *dump, const struct hr_chains *tree,
		  const struct hr_scan_result *result, const struct hr_path_options *opt, uint64_t addr,
		  bool *found, struct hr_error *err);

/*
 * The same for the opt->paths biggest reachable objects charged to a chain named with
 * type (`x. (T)` or `x. (*T)`), one path each, after a line with how many such objects
 * and bytes there are; *found false when there is none.
 */
int hr_write_paths_of_type(FILE *out, const struct hr_dump *dump, const struct hr_chains *tree,
			   const struct hr_scan_result *result, const struct hr_path_options *opt,
			   const char *type, bool *found, struct hr_error *err);

struct hr_retained_options {
	size_t top; /* rows of each list: root variables, groups, objects (0: all) */
	bool tsv;   /* a header row, then tab-separated rows, for scripts */
	const struct hr_image *img; /* the binary, for the objects' types (NULL: "?") */
};

/*
 * Writes the root variables and the heap objects of largest retained size (what would
 * be freed with them, from the dominator tree hd), each with its chain (an object's:
 * the chain the scan charged it to, which needs hr_scan_keep_paths()), its type as the
 * typed walk read it (hr_scan_keep_types(); a map with its entries, a slice with its
 * length: hr_describe_object()), its own size, retained bytes and objects, and its
 * address; between the two lists, the groups of roots that share memory none of them
 * retains alone (kind "group" in tsv, the roots joined by " + "). As text, also the
 * total reachable and what is shared by several roots and retained by none. Returns 0,
 * HR_EIO when writing fails or HR_ENOMEM.
 */
int hr_write_retained(FILE *out, const struct hr_dump *dump, const struct hr_chains *tree,
		      const struct hr_scan_result *result, const struct hr_heap_dominators *hd,
		      const struct hr_retained_options *opt, struct hr_error *err);

/*
 * Writes the dump's goroutines grouped by kind (the same creator, the function of the
 * go statement from gopc, the same functions on the stack, the same status, wait reason
 * and leak verdict), leaked groups first, then biggest first; each group with its count,
 * its verdict (leaks: leaks.h's; NULL: unknown), the objects and bytes its goroutines'
 * stacks reached first (the scan must have kept goroutines: hr_scan_keep_goroutines()),
 * the size of their stacks, and for a leaked group the heap only its goroutines keep
 * alive. The text view's header says how many are leaked and what the leaked groups
 * hold. tsv: a header row, then tab-separated rows, with the goroutine ids of each
 * group. img (the binary where the process loaded it) names the creators (NULL: "?").
 * Returns 0, HR_EIO or HR_ENOMEM.
 */
int hr_write_goroutines(FILE *out, const struct hr_dump *dump, const struct hr_image *img,
			const struct hr_scan_result *result,
			const struct hr_goroutine_leaks *leaks, bool tsv, struct hr_error *err);

/* --- leak suspects (src/writers/suspects.c) ----------------------------------------------- */

enum hr_suspects_format { HR_SUSPECTS_TEXT, HR_SUSPECTS_JSON, HR_SUSPECTS_HTML };

struct hr_suspects_options {
	enum hr_suspects_format format;
	const char *binary, *dump; /* as the user named them, for the report and its commands */
	/* HTML only: */
	const struct hr_chains *chains; /* the chains by retained size (the dominator view) */
	const char *goroutines_tsv;     /* hr_write_goroutines()'s tsv, or NULL */
};

/*
 * Writes the suspects (suspects.h) as a page of text, as one JSON object whose schema
 * docs/suspects.md describes ("heapref-suspects/1"), or as one self-contained HTML page
 * (the JSON inside, drawn by an inline script: each suspect with its path as a graph,
 * an icicle of the chains by retained size, the goroutine groups). Returns 0 or HR_EIO.
 */
int hr_write_suspects(FILE *out, const struct hr_suspects *s, const struct hr_suspects_options *opt,
		      struct hr_error *err);

/* --- hprof export (src/writers/hprof.c) ------------------------------------------------ */

/*
 * Writes the objects the scan reached as a Java heap dump, the binary "JAVA PROFILE
 * 1.0.2" hprof format, to out (docs/hprof.md): an instance of a class named after its
 * Go type, with the DWARF members as fields, for each object the typed walk read as a
 * struct; arrays of primitives for other pointer-free memory; arrays of words for the
 * rest; a class of static references per global (sticky-class roots), a thread with
 * Java-frame roots per goroutine, "unknown" roots for finalizers and other roots. The
 * scan must have kept paths and types (hr_scan_keep_paths(), hr_scan_keep_types()) and
 * run both passes. Returns 0, HR_EIO when writing fails, HR_ENOMEM, or HR_EUSAGE for
 * an object or record over the format's 4 GiB.
 */
int hr_write_hprof(FILE *out, const struct hr_dump *dump, const struct hr_image *img,
		   const struct hr_scan_result *result, struct hr_error *err);

#endif
