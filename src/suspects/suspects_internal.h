/* SPDX-License-Identifier: Apache-2.0 */
/*
 * suspects_internal.h - what suspects.c and describe.c share.
 */
#ifndef HEAPREF_SUSPECTS_INTERNAL_H
#define HEAPREF_SUSPECTS_INTERNAL_H

#include <stdint.h>

#include "heapref/suspects.h"

/* Nodes labelled before the labels go down the dominator tree: node << 8 | label, sorted. */
struct seeds {
	uint64_t *v;
	size_t n, cap;
};

struct suspect_ctx {
	const struct hr_suspect_sources *src;
	uint32_t *big; /* by hr_heap_dom_inner_index(): the child in the dominator tree
			* retaining most (biggest_child()) */
	uint8_t *region; /* by hr_heap_dom_inner_index(): the root candidate dominating the
			  * node, or 0xff (see label_of()) */
	struct seeds region_starts; /* each root candidate's root variable, labelled by its index */
	uint8_t searching; /* the candidate whose path is being searched */
	uint64_t *along;   /* a shared suspect's path search: bits by chain node, the point's
			    * chain and those above it (see find_path()) */
};

/* A non-zero key for the type object obj was read as (see type_key_name()). */
/* Node v's child in the dominator tree that retains most; HR_DOM_NONE: none, or c->big not made. */
uint32_t biggest_child(const struct suspect_ctx *c, uint32_t v);
uint32_t object_type_key(const struct suspect_ctx *c, uint32_t obj);
/* "main.Node", "[]uint8" (a backing array), "closure main.f.func1", "string bytes",
 * "? (by bitmap)"; NULL when out of memory. */
char *type_key_name(const struct suspect_ctx *c, uint32_t key);
/* The name of chain root node chain. */
const char *root_name(const struct suspect_ctx *c, uint32_t chain);
/* Fills hop for graph node `node`, reached from graph node prev (HR_DOM_NONE: none). */
int describe_hop(const struct suspect_ctx *c, uint32_t prev, uint32_t node,
		 struct hr_suspect_hop *hop);
/* Fills s->point for graph node point. */
/*
 * A shared group whose memory spreads over its ntops tops (none keeps
 * HR_SUSPECT_KEEP_RATIO of it) as its own pile: HR_PILE_SHARED, the count its tops, the
 * type theirs; the biggest top (its path's end) for the address and chain.
 */
int describe_shared_tops(const struct suspect_ctx *c, const uint32_t *tops, uint32_t ntops,
			 uint32_t biggest, struct hr_suspect *s);
/* prev: the point's predecessor on the suspect's path (HR_DOM_NONE: none) */
int describe_point(const struct suspect_ctx *c, uint32_t point, uint32_t prev,
		   struct hr_suspect *s);
/* printf into a new string; NULL when out of memory. */
char *str_printf(const char *fmt, ...) HR_PRINTF(1, 2);
/*
 * Appends to *v (*n suspects; its capacity is *n: it grows) a suspect for each group of
 * leaked goroutines (by creator) that alone keeps threshold bytes or more alive.
 */
int find_leaked_groups(const struct suspect_ctx *c, uint64_t threshold, struct hr_suspect **v,
		       size_t *n, struct hr_error *err);
/* How many goroutines have a frame of the function frame variable root is named after;
 * *leaked of them leaked (with the verdicts). */
uint64_t count_frame_goroutines(const struct suspect_ctx *c, const char *root, uint64_t *leaked);

#endif
