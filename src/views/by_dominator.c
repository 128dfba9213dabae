/* SPDX-License-Identifier: Apache-2.0 */
/*
 * by_dominator.c - the chain tree by dominator (analyze --attribution dominator, see
 * views.h): each object charged under its immediate dominator's chain, so that a
 * node's cumulative value is what would be freed with it.
 */
#include <stdlib.h>
#include <string.h>

#include "views_internal.h"

#define SHARED_NAME "$shared by several roots"

struct builder {
	const struct hr_heap_dominators *hd;
	const struct hr_chains *from; /* the scan's tree, for names */
	const struct hr_scan_result *result;
	struct hr_chains *to;
	uint32_t *chain_of;           /* [graph nodes]: the new tree's node of each */
	uint32_t shared;              /* the root holding what the virtual root dominates */
};

static uint32_t child_named(struct builder *b, uint32_t parent, uint32_t name_id)
{
	const char *name = hr_chains_name(b->from, name_id);

	return hr_chains_child(b->to, parent, name, strlen(name));
}

/* The new chain node of a root variable: a root of the same name. */
static uint32_t root_chain(struct builder *b, const struct hr_dom_node *n)
{
	return child_named(b, HR_CHAINS_TOP, hr_chains_node(b->from, n->root)->name);
}

/*
 * The new chain node of an object: its dominator's, then the last name of the chain the
 * scan charged it to (`$mapval. (*main.Item)`). An object the scan charged to a root that
 * is also its dominator is that root's own value, as in the profile by first reach.
 */
static uint32_t object_chain(struct builder *b, const struct hr_dom_node *n)
{
	uint32_t charged = hr_result_reached_by(b->result, n->object).node;
	uint32_t parent;

	if (n->idom == 0) {
		if (b->shared == HR_CHAINS_NONE)
			b->shared = hr_chains_child(b->to, HR_CHAINS_TOP, SHARED_NAME,
						    strlen(SHARED_NAME));
		parent = b->shared;
	} else {
		parent = b->chain_of[n->idom];
	}
	if (parent == HR_CHAINS_NONE || charged == HR_CHAINS_NONE || charged == HR_CHAINS_TOP)
		return parent;
	if (hr_chains_node(b->from, charged)->parent == HR_CHAINS_TOP && n->idom != 0 &&
	    hr_heap_dom_node(b->hd, n->idom).root == charged)
		return parent;
	return child_named(b, parent, hr_chains_node(b->from, charged)->name);
}

struct hr_chains *view_by_dominator(const struct hr_chains *from,
				    const struct hr_view_sources *src, uint32_t max_depth,
				    bool fold_recursion, struct hr_error *err)
{
	const struct hr_heap_dominators *hd = src->dominators;
	struct builder b = { .hd = hd, .from = from, .result = src->result,
			     .shared = HR_CHAINS_NONE };
	struct hr_dom_walk walk = { 0 };
	uint32_t n, id;

	if (!hd) {
		hr_error_set(err, HR_EUSAGE, "the view by dominator needs the dominator tree");
		return NULL;
	}
	n = hr_heap_dom_count(hd);
	b.to = hr_chains_new(max_depth);
	b.chain_of = malloc(((size_t)n + 1) * sizeof(*b.chain_of));
	if (!b.to || !b.chain_of || hr_heap_dom_walk_start(hd, &walk))
		goto nomem;
	if (fold_recursion)
		hr_chains_fold_recursion(b.to);
	hr_chains_keep_examples(b.to, hr_chains_examples_kept(from));
	while ((id = hr_heap_dom_walk_next(&walk)) != HR_DOM_NONE) { /* after its dominator */
		struct hr_dom_node node = hr_heap_dom_node(hd, id);
		uint32_t c = HR_CHAINS_TOP;

		if (node.root != HR_CHAINS_NONE)
			c = root_chain(&b, &node);
		else if (node.object != UINT32_MAX)
			c = object_chain(&b, &node);
		if (c == HR_CHAINS_NONE)
			goto nomem;
		b.chain_of[id] = c;
		if (node.object != UINT32_MAX) {
			uint64_t size = hr_heap_dom_object_size(hd, node.object);

			hr_chains_charge(b.to, c, 1, size);
			if (hr_chains_offer_example(b.to, c, hr_heap_dom_object_addr(hd, node.object),
						    size))
				goto nomem;
		}
	}
	hr_heap_dom_walk_end(&walk);
	free(b.chain_of);
	return b.to;
nomem:
	hr_error_set(err, HR_ENOMEM, "out of memory for the chains by dominator");
	hr_heap_dom_walk_end(&walk);
	free(b.chain_of);
	hr_chains_free(b.to);
	return NULL;
}
