/* SPDX-License-Identifier: Apache-2.0 */
/*
 * chain_lists.c - what the text views of a chain tree (report.c, diff.c) do alike:
 * cumulative values summed up the tree, and each node's children listed biggest first.
 */
#include <stdlib.h>
#include <string.h>

#include "writers_internal.h"

void chain_values_sum_up(const struct hr_chains *tree, size_t n, struct chain_value *values)
{
	/* node ids are made in order, a child after its parent: one backward sweep */
	for (size_t i = n; i-- > 1;) {
		uint32_t parent = hr_chains_node(tree, (uint32_t)i)->parent;

		values[parent].objects += values[i].objects;
		values[parent].bytes += values[i].bytes;
	}
}

int chain_child_biggest_first(const void *pa, const void *pb)
{
	const struct chain_child *a = pa, *b = pb;
	int by_name;

	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	if (a->objects != b->objects)
		return a->objects > b->objects ? -1 : 1;
	by_name = strcmp(a->name, b->name);
	if (by_name)
		return by_name;
	return a->id < b->id ? -1 : a->id > b->id;
}

void chain_children_list(const struct hr_chains *tree, size_t n, uint32_t *first_child,
			 struct chain_child *children, chain_child_fn entry, void *ctx)
{
	struct chain_child c;

	/* a counting sort by parent: first count, then place, then sort each group */
	memset(first_child, 0, (n + 1) * sizeof(*first_child));
	for (size_t i = 1; i < n; i++)
		if (entry(ctx, (uint32_t)i, &c))
			first_child[hr_chains_node(tree, (uint32_t)i)->parent + 1]++;
	for (size_t i = 0; i < n; i++)
		first_child[i + 1] += first_child[i];
	for (size_t i = 1; i < n; i++)
		if (entry(ctx, (uint32_t)i, &c)) {
			c.name = hr_chains_name(tree, hr_chains_node(tree, (uint32_t)i)->name);
			c.id = (uint32_t)i;
			children[first_child[hr_chains_node(tree, (uint32_t)i)->parent]++] = c;
		}
	for (size_t i = n; i > 0; i--) /* the fill moved each start to the next one's */
		first_child[i] = first_child[i - 1];
	first_child[0] = 0;
	for (size_t i = 0; i < n; i++)
		qsort(children + first_child[i], first_child[i + 1] - first_child[i],
		      sizeof(*children), chain_child_biggest_first);
}
