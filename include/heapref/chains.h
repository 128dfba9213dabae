/* SPDX-License-Identifier: Apache-2.0 */
/*
 * chains.h - the chain tree: stage 4 of the pipeline.
 *
 * Reference chains from root variables to the memory they keep alive, merged into a
 * tree: `main.cache` -> `$mapval. (*main.Entry)` -> `buf. ([]uint8)`. Each node has a
 * name (no addresses, so two dumps of one program compare) and its own value: the
 * objects and bytes charged to it, i.e. what the pointers read at that node lead to.
 * A node's cumulative value (its own plus its descendants') is what is reached through it.
 *
 * Nodes have dense ids; id 0 is the invisible top whose children are the roots. Names
 * are interned: each distinct name is stored once and has a dense name id.
 *
 * Depth is counted in named nodes from the root (a root has depth 1). A child asked for
 * beyond the depth limit is not made: hr_chains_child() returns the parent, so what lies
 * deeper is charged to the last node of the chain: cut, never lost.
 */
#ifndef HEAPREF_CHAINS_H
#define HEAPREF_CHAINS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "heapref/base.h"

#define HR_CHAINS_TOP 0u
#define HR_CHAINS_NONE UINT32_MAX

struct hr_chain_node {
	uint32_t parent;   /* HR_CHAINS_TOP for a root; HR_CHAINS_NONE for the top itself */
	uint32_t name;     /* name id, see hr_chains_name() */
	uint32_t depth;    /* 1 for a root */
	uint64_t objects;  /* own value: objects charged to this node */
	uint64_t bytes;    /* own value: their bytes */
};

struct hr_chains;

/* A tree that keeps at most max_depth named nodes in a chain (0: no limit). NULL if no memory. */
struct hr_chains *hr_chains_new(uint32_t max_depth);
void hr_chains_free(struct hr_chains *tree);

/*
 * The child of parent named name (len bytes), made if it does not exist yet. Returns
 * its id, parent itself if the depth limit stops it, the node of the same type on the
 * chain when folding recursion (below), or HR_CHAINS_NONE when out of memory.
 */
uint32_t hr_chains_child(struct hr_chains *tree, uint32_t parent, const char *name, size_t len);

/*
 * What hr_chains_child() would return, without changing the tree: HR_CHAINS_NONE when it
 * would change it (make a node, or intern a new name: the names are the tree's too).
 * Safe to call from several threads while nobody changes the tree.
 */
uint32_t hr_chains_find(const struct hr_chains *tree, uint32_t parent, const char *name,
			size_t len);

/*
 * Folds recursion from now on: a child whose name has a type, `x. (T)`, that a node on
 * its chain already has (the parent included) is that node, not a new one. A list's
 * `next. (*main.Node)` under `next. (*main.Node)` is the first `next` again, and a
 * binary tree's `Right. (*T)` under `Left. (*T)` is the `Left`: a recursive structure
 * is a few chains, not one per path through it. Roots and names without a type
 * (`$sub_objects$`) never fold. Call it before making children.
 */
void hr_chains_fold_recursion(struct hr_chains *tree);

/* Adds objects and bytes to node's own value. */
void hr_chains_charge(struct hr_chains *tree, uint32_t node, uint64_t objects, uint64_t bytes);

/* Nodes, including the top (id 0). Ids are dense in [0, count). */
size_t hr_chains_count(const struct hr_chains *tree);
const struct hr_chain_node *hr_chains_node(const struct hr_chains *tree, uint32_t id);
/* The text of a name id (NUL-terminated; owned by the tree) and how many names exist. */
const char *hr_chains_name(const struct hr_chains *tree, uint32_t name_id);
size_t hr_chains_name_count(const struct hr_chains *tree);

/*
 * A copy of tree in which the elements of each array, slice or channel buffer are one
 * chain: `[0]. (T)` ... `[9]. (T)` and `[10+]. (T)` under one parent become `[*]. (T)`,
 * their subtrees merged the same way and their values added. For reports, where which
 * element holds what matters less than what the elements hold together. Node ids of
 * the copy are its own. NULL when out of memory.
 */
struct hr_chains *hr_chains_fold_elements(const struct hr_chains *tree);
/* (The copy keeps the examples of the nodes it merges, the biggest.) */

/* An object charged to a node, shown as an example of what the node holds. */
struct hr_chain_example {
	uint64_t addr;
	uint64_t size;
};

/*
 * Keeps up to per_node example objects for each node from now on: the biggest offered
 * (ties: the first offered). 0 turns examples off. At most HR_CHAINS_EXAMPLES_MAX.
 */
#define HR_CHAINS_EXAMPLES_MAX 16
void hr_chains_keep_examples(struct hr_chains *tree, unsigned per_node);
/* How many examples per node the tree keeps (0: none). */
unsigned hr_chains_examples_kept(const struct hr_chains *tree);
/* Offers an object charged to node as an example. 0, or HR_ENOMEM. */
int hr_chains_offer_example(struct hr_chains *tree, uint32_t node, uint64_t addr, uint64_t size);
/* node's examples, biggest first; *n of them (0 when none are kept). Owned by the tree. */
const struct hr_chain_example *hr_chains_examples(const struct hr_chains *tree, uint32_t node,
						  size_t *n);

/* The names of node's chain, root first, joined by " -> " ("?" for no node); the caller
 * frees it. NULL when out of memory. */
char *hr_chains_text(const struct hr_chains *tree, uint32_t node);

/*
 * Makes in u the chain of every node of t (the same names from the root); to[i] (t's
 * node count entries) becomes node i's node in u. 0, or HR_ENOMEM.
 */
int hr_chains_merge(struct hr_chains *u, const struct hr_chains *t, uint32_t *to);

/* A root whose chains grew between two trees (hr_chains_growth()). */
struct hr_chain_growth {
	char *root;                   /* the root's name */
	int64_t bytes, objects;       /* its cumulative growth, new minus old */
	uint64_t old_bytes, new_bytes;
	char *chain;                  /* where the growth piles up: from the root down while
				       * one child keeps `keep` of its parent's growth; names
				       * joined by " -> " */
	int64_t chain_bytes, chain_objects; /* that chain's growth */
};

/*
 * The roots whose cumulative bytes grew from tree old to tree new (two dumps analysed
 * alike, compared by chain), biggest growth first, into *rows (*nrows of them; free
 * with hr_chain_growth_free()). 0, or HR_ENOMEM.
 */
int hr_chains_growth(const struct hr_chains *old, const struct hr_chains *new, double keep,
		     struct hr_chain_growth **rows, size_t *nrows);
void hr_chain_growth_free(struct hr_chain_growth *rows, size_t n);

/* Sum of the own values of all nodes. */
void hr_chains_totals(const struct hr_chains *tree, uint64_t *objects, uint64_t *bytes);

#endif
