/* SPDX-License-Identifier: Apache-2.0 */
/*
 * writers_internal.h - what the writers share and no other stage needs.
 */
#ifndef HEAPREF_WRITERS_INTERNAL_H
#define HEAPREF_WRITERS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "heapref/chains.h"
#include "heapref/suspects.h"

/* Writes the chain of node, root first, its names joined by " -> ". */
void write_chain(FILE *out, const struct hr_chains *tree, uint32_t node);

/* The chain tree root above node (node itself for a root). */
uint32_t chain_root(const struct hr_chains *tree, uint32_t node);

/* --- chain_lists.c: what the text views of a tree do alike ----------------------------- */

/* Objects and bytes: a node's own, or with all that is below it. */
struct chain_value {
	uint64_t objects;
	uint64_t bytes;
};

/* values[i] (i < n nodes of tree) starts as node i's own and ends as its cumulative. */
void chain_values_sum_up(const struct hr_chains *tree, size_t n, struct chain_value *values);

/* A node among its parent's children, as a view lists them. */
struct chain_child {
	int64_t bytes;   /* what the view ranks by: a size, or a growth */
	int64_t objects;
	const char *name;
	uint32_t id;
};

/* qsort() order: the most bytes first, then the most objects, then by name, then id. */
int chain_child_biggest_first(const void *a, const void *b);

/* Whether node id is listed among its parent's children; if so, fills c's bytes and objects. */
typedef bool (*chain_child_fn)(void *ctx, uint32_t id, struct chain_child *c);

/*
 * Lists each node's children together, biggest first: those of node i are
 * children[first_child[i] .. first_child[i + 1]). first_child holds n + 1 entries,
 * children as many as entry() lists.
 */
void chain_children_list(const struct hr_chains *tree, size_t n, uint32_t *first_child,
			 struct chain_child *children, chain_child_fn entry, void *ctx);

/* --- json.c: JSON values ------------------------------------------------------------------ */

/*
 * A JSON string of s (NULL: ""). '<', '>' and '&' are escaped too, so that the text
 * can stand inside an HTML <script> element; a byte that is not part of valid UTF-8
 * becomes U+FFFD, so that the output is always valid JSON.
 */
void json_string(FILE *out, const char *s);
/* "0x1c79ffe66000": an address as a JSON string. */
void json_addr(FILE *out, uint64_t addr);

/* --- suspects.c, suspects_html.c ------------------------------------------------------------ */

struct hr_suspects_options;

/* The suspects as one JSON object, schema heapref-suspects/1. */
void write_suspects_json(FILE *out, const struct hr_suspects *s, const char *binary,
			 const char *dump);
/* The suspects as one self-contained HTML page. */
void write_suspects_html(FILE *out, const struct hr_suspects *s,
			 const struct hr_suspects_options *opt);

#endif
