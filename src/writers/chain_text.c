/* SPDX-License-Identifier: Apache-2.0 */
/*
 * chain_text.c - a chain of the chain tree as text, for the writers that name the chain
 * of one node (why, retained).
 */
#include <stdlib.h>

#include "writers_internal.h"

uint32_t chain_root(const struct hr_chains *tree, uint32_t node)
{
	while (hr_chains_node(tree, node)->parent != HR_CHAINS_TOP &&
	       hr_chains_node(tree, node)->parent != HR_CHAINS_NONE)
		node = hr_chains_node(tree, node)->parent;
	return node;
}

void write_chain(FILE *out, const struct hr_chains *tree, uint32_t node)
{
	uint32_t depth = hr_chains_node(tree, node)->depth, *ids = malloc(depth * sizeof(*ids) + 1);
	uint32_t n = 0;

	if (!ids) { /* only the name of the node itself, then */
		fputs(hr_chains_name(tree, hr_chains_node(tree, node)->name), out);
		return;
	}
	for (uint32_t id = node; id != HR_CHAINS_TOP && n < depth; id = hr_chains_node(tree, id)->parent)
		ids[n++] = id;
	while (n-- > 0)
		fprintf(out, "%s%s", hr_chains_name(tree, hr_chains_node(tree, ids[n])->name),
			n ? " -> " : "");
	free(ids);
}
