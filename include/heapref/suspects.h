/* SPDX-License-Identifier: Apache-2.0 */
/*
 * suspects.h - leak suspects: the few things that keep a large share of the heap alive,
 * and where in each the memory piles up (a stage after the dominator tree, before the
 * writers; `heapref suspects`).
 *
 * A suspect is
 *   - a root variable that retains at least the threshold (a share of the reachable
 *     heap), or
 *   - a group of roots that share at least that much memory which none of them retains
 *     alone (dominators.h's shared groups: "shared by main.a and main.b"), or
 *   - the goroutines of one creator that the runtime's definition finds leaked (leaks.h),
 *     when their stacks alone keep that much alive (with the verdicts in the sources).
 * For each, its accumulation point: from the suspect, down the dominator tree, while the
 * child that retains most keeps at least HR_SUSPECT_KEEP_RATIO of what its parent
 * retains (Eclipse MAT's "big drop" rule and its default ratio, 0.7: below it the memory
 * spreads over several children, so the parent is where it piles up). Then up again
 * while the point's dominator is charged to the same chain (the same variable or field
 * of the same structure): a map's header rather than its table of groups, a list's
 * first node rather than its last. A group of shared memory starts from its tops (the
 * objects no one root dominates): when the biggest keeps less than the ratio of the
 * group, the tops are the point themselves (HR_PILE_SHARED). The point is described as
 * a user would say it (a map and its entries, a slice's backing array and its length, a
 * list and its nodes, a channel and its buffer); the objects it retains are counted by
 * type; a shortest path leads from the root to it.
 *
 * With a baseline (the chain tree of an earlier dump of the program), also the roots
 * whose chains grew most since, each with the chain down to where the growth piles up
 * (the same 0.7 rule, on growth: chains.h's hr_chains_growth()).
 *
 * Lifecycle: hr_suspects_find(), read the struct, hr_suspects_free().
 */
#ifndef HEAPREF_SUSPECTS_H
#define HEAPREF_SUSPECTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "heapref/base.h"
#include "heapref/binary.h"
#include "heapref/chains.h"
#include "heapref/dominators.h"
#include "heapref/leaks.h"
#include "heapref/model.h"
#include "heapref/result.h"

#define HR_SUSPECT_KEEP_RATIO 0.7 /* see above */
#define HR_SUSPECT_TYPES_MAX 10   /* types listed per suspect, biggest first */
#define HR_SUSPECT_EXAMPLES_MAX 3 /* example addresses per suspect */
#define HR_SUSPECTS_MAX 20        /* suspects listed at most, biggest first */
#define HR_GROWTH_MAX 10          /* roots listed that grew since a baseline */

enum hr_suspect_kind {
	HR_SUSPECT_ROOT,   /* one root variable retains it */
	HR_SUSPECT_SHARED, /* several roots share it, none retains it alone */
	HR_SUSPECT_GOROUTINES, /* leaked goroutines of one creator keep it (their stacks
				* alone reach it); roots[0] is the creator */
};

/* What an accumulation point is, as a user would name it. */
enum hr_pile_kind {
	HR_PILE_OBJECT, /* one object that points to many */
	HR_PILE_MAP,    /* a map: count is its entries */
	HR_PILE_SLICE,  /* a slice's backing array: count is the slice's length (or, when
			 * the slice header was not found, the non-nil pointers in it) */
	HR_PILE_LIST,   /* a chain of objects of one type (a list): count is its nodes */
	HR_PILE_CHAN,   /* a channel: count is the elements in its buffer */
	HR_PILE_GOROUTINES, /* a leaked goroutine group: count is its goroutines */
	HR_PILE_SHARED, /* the objects several roots share, none keeping most of them (a
			 * shared group's tops): count is those objects */
};

/* One hop of the path from the root to the accumulation point. */
struct hr_suspect_hop {
	char *field;   /* how the previous hop points here (".next", "[3]", "$mapval");
			* "" for the root, or where the word has no name */
	char *type;    /* what the object is ("main.Node", "[]uint8"); the root's name for
			* the root */
	uint64_t addr; /* 0 for the root */
	uint64_t size;
};

/* Objects of one type among what the accumulation point retains. */
struct hr_suspect_type {
	char *type;
	uint64_t objects, bytes;
};

struct hr_suspect {
	enum hr_suspect_kind kind;
	uint64_t bytes, objects;      /* what it retains */
	char **roots;                 /* the root variable, or the roots sharing it */
	size_t nroots;
	bool more_roots;              /* more roots share it than are named */
	uint32_t chain;               /* the root's chain tree node (HR_CHAINS_NONE: shared) */
	uint64_t goid;                /* a frame variable's goroutine that holds it (of a
				       * leaked group: its first goroutine) */
	char *creator;                /* its creator, or NULL (not a frame variable) */
	uint64_t goroutines;          /* goroutines running the frame variable's function (of
				       * a leaked group: its goroutines) */
	uint64_t leaked;              /* of those, leaked (with the verdicts) */
	struct {
		enum hr_pile_kind kind;
		char *what;           /* "map[string]*main.Session with 7000 entries" */
		char *type;           /* "map[string]*main.Session" */
		uint64_t count;       /* see enum hr_pile_kind; 0 for an object */
		uint64_t addr, size;
		uint64_t bytes, objects; /* what it retains */
		char *chain;          /* the chain it is charged to, names joined by " -> " */
	} point;
	struct hr_suspect_hop *path;  /* root first, the point last */
	size_t npath;
	struct hr_suspect_type types[HR_SUSPECT_TYPES_MAX]; /* of what the point retains */
	size_t ntypes;
	uint64_t other_type_objects, other_type_bytes; /* the types not listed */
	uint64_t examples[HR_SUSPECT_EXAMPLES_MAX]; /* addresses of retained objects of
						     * its biggest type */
	size_t nexamples;
};

struct hr_suspects {
	uint64_t reachable_bytes, reachable_objects;
	double threshold_percent;
	uint64_t threshold_bytes;
	struct hr_suspect *v;   /* biggest first */
	size_t n;
	uint64_t below_threshold; /* suspects found but not listed (over HR_SUSPECTS_MAX) */
	bool has_baseline;        /* growth was asked for (a baseline tree) */
	struct hr_chain_growth *growth; /* the roots that grew most since the baseline,
					 * biggest first (at most HR_GROWTH_MAX) */
	size_t ngrowth;
};

/* What the suspects are found in: an analysis with paths, types and the dominator tree. */
struct hr_suspect_sources {
	const struct hr_dump *model;
	const struct hr_image *img;          /* names: types, globals, creators */
	const struct hr_chains *tree;
	const struct hr_scan_result *result; /* paths, types and goroutines' shares kept */
	const struct hr_heap_dominators *dominators;
	const struct hr_chains *baseline;    /* an earlier dump's tree, analysed alike, or NULL */
	const struct hr_goroutine_leaks *leaks; /* the verdicts, or NULL */
	unsigned threads;                    /* how many the search may use: 0 or 1 is one */
};

/*
 * The suspects over threshold_percent of the reachable heap. NULL with err set when out
 * of memory.
 */
struct hr_suspects *hr_suspects_find(const struct hr_suspect_sources *src,
				     double threshold_percent, struct hr_error *err);
void hr_suspects_free(struct hr_suspects *s);

/* An object as a user would name it (as a suspect's accumulation point). */
struct hr_object_description {
	enum hr_pile_kind kind; /* HR_PILE_LIST only for points: a list needs the tree */
	char *type;             /* "map[string]*main.Session", "[]*main.Event", "main.Node" */
	char *what;             /* "map[string]*main.Session with 7000 entries" */
	uint64_t count;         /* see enum hr_pile_kind */
};

/*
 * Describes heap object obj of an analysis (src as for hr_suspects_find()) into *d,
 * released with hr_object_description_release(). 0, or HR_ENOMEM.
 */
int hr_describe_object(const struct hr_suspect_sources *src, uint32_t obj,
		       struct hr_object_description *d);
void hr_object_description_release(struct hr_object_description *d);

/* "map", "slice", "list", "channel", "object", "goroutines". */
const char *hr_pile_kind_name(unsigned kind);

#endif
