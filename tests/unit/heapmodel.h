/* SPDX-License-Identifier: Apache-2.0 */
/*
 * heapmodel.h - a Go process's memory written by hand for the scanner's unit tests:
 * heap objects, the data and bss segments and one goroutine's stack frames, word by
 * word, each word a pointer or not (the GC's bitmaps as the dump gives them), and the
 * itabs. From it come the heap dump (dumpbuf.h), a scan of that dump with a binary
 * made by hand (binary_fixture.h) through the public APIs, and what the roots reach by
 * the pointer words alone, worked out here without heapref: the other side of the
 * scan's invariant (the chain tree holds exactly what is reachable).
 *
 * Failures are cmocka failures of the calling test.
 */
#ifndef HEAPREF_TEST_HEAPMODEL_H
#define HEAPREF_TEST_HEAPMODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dumpbuf.h"
#include "heapref/analysis.h"
#include "heapref/binary.h"
#include "heapref/chains.h"
#include "heapref/dump.h"
#include "heapref/scan.h"

#define HM_HEAP UINT64_C(0xc000000000)     /* heap objects live in [HM_HEAP, +64 MiB) */
#define HM_MAX_REGIONS 64
#define HM_MAX_WORDS 128                   /* a region holds at most 1 KiB */

enum hm_kind { HM_OBJECT, HM_DATA, HM_BSS, HM_FRAME };

struct hm_region {
	enum hm_kind kind;
	uint64_t addr;
	uint64_t size;                     /* bytes, a multiple of 8 */
	uint64_t words[HM_MAX_WORDS];
	uint64_t ptrs[HM_MAX_WORDS / 64];  /* bit i: word i is a pointer */
	uint64_t entry_pc, pc;             /* a frame's function and where it is */
	const char *func;
};

struct heapmodel {
	const char *go_version;            /* the dump's params record */
	struct hm_region regions[HM_MAX_REGIONS];
	size_t n;
	uint64_t itabs[8][2];              /* itab address, type address */
	size_t nitabs;
};

/* An empty model of a process run by go_version ("go1.26.8"). */
void hm_init(struct heapmodel *m, const char *go_version);
/* A heap object of size bytes at addr, its words 0 and not pointers. */
void hm_object(struct heapmodel *m, uint64_t addr, uint64_t size);
/* The data (HM_DATA) or bss (HM_BSS) segment. */
void hm_segment(struct heapmodel *m, enum hm_kind kind, uint64_t addr, uint64_t size);
/*
 * The next frame of the one goroutine, from the running one (depth 0) down: size
 * bytes at sp, of func (entry_pc) at pc.
 */
void hm_frame(struct heapmodel *m, uint64_t sp, uint64_t size, uint64_t entry_pc, uint64_t pc,
	      const char *func);
/* The word at address at (in a region added before) holds value, a pointer or not. */
void hm_ptr(struct heapmodel *m, uint64_t at, uint64_t value);
void hm_word(struct heapmodel *m, uint64_t at, uint64_t value);
/* An itab record: the itab at addr is for the type whose type word is type_addr. */
void hm_itab(struct heapmodel *m, uint64_t addr, uint64_t type_addr);

/* The dump: header, params, itabs, objects, the goroutine and its frames, data, bss. */
void hm_dump(const struct heapmodel *m, struct dumpbuf *b);
/*
 * What the roots (data and bss pointer words, frame pointer words) reach through
 * pointer words, breadth first, a pointer anywhere inside an object reaching it:
 * how many objects and bytes.
 */
void hm_reach(const struct heapmodel *m, uint64_t *objects, uint64_t *bytes);

/* An analysis of a model's dump with a binary (analysis.h): both passes run. */
struct hm_run {
	struct dumpbuf buf;
	struct hr_dump *dump;
	struct hr_analysis an;
	struct hr_chains *tree; /* an.tree */
	const struct hr_scan_summary *sum; /* the result's */
};

/*
 * Dumps m, opens the dump, and analyses it with bin into a tree of at most 256 levels
 * that folds recursion (as analyze does) or not (--full-chains), with opts (NULL: the
 * defaults).
 */
void hm_run(struct hm_run *r, const struct heapmodel *m, struct hr_binary *bin, bool fold,
	    const struct hr_scan_options *opts);
/* The same with what rq asks (max_depth 0 there: 256). */
void hm_run_request(struct hm_run *r, const struct heapmodel *m, const struct hr_binary *bin,
		    const struct hr_analysis_request *rq);
void hm_run_release(struct hm_run *r);

/*
 * The chain tree as text, a line per node sorted by chain:
 * "main.head -> next. (*main.Node): 3 96" (its own objects and bytes). Caller frees.
 */
char *hm_tree_text(const struct hr_chains *tree);
/* Fails unless the tree's totals and the scan's reached objects are what m reaches. */
void hm_check_reach(const struct heapmodel *m, const struct hm_run *r);

#endif
