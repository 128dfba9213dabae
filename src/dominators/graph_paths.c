/* SPDX-License-Identifier: Apache-2.0 */
/*
 * graph_paths.c - shortest paths from the roots to one object in the heap graph, for
 * `heapref why -n K` (see dominators.h): breadth first from every root variable at
 * once, around the objects earlier paths went through.
 */
#include <stdlib.h>

#include "heapref/dominators.h"

struct bfs {
	const uint64_t *avoid;   /* by graph node */
	uint32_t nroots;
	uint32_t *from;          /* [nodes]: the node it was reached from, HR_DOM_NONE unreached */
	uint32_t *queue;         /* [nodes]: first in first out */
	uint32_t head, tail;
	uint32_t expanding;
};

static void emit_reach(void *ctx, uint32_t v)
{
	struct bfs *b = ctx;

	if (b->from[v] != HR_DOM_NONE)
		return;
	if (b->avoid && hr_bit_get(b->avoid, v))
		return;
	b->from[v] = b->expanding;
	b->queue[b->tail++] = v;
}

/* The nodes from target back to its root variable, turned root first into *path. */
static int take_path(const struct bfs *b, uint32_t target, uint32_t **path, size_t *n)
{
	size_t len = 0;

	for (uint32_t v = target; v != 0; v = b->from[v])
		len++;
	if (!(*path = malloc(len * sizeof(**path))))
		return HR_ENOMEM;
	*n = len;
	for (uint32_t v = target; v != 0; v = b->from[v])
		(*path)[--len] = v;
	return HR_OK;
}

int hr_heap_graph_path(struct hr_heap_graph *g, uint32_t target, const uint64_t *avoid,
		       uint32_t **path, size_t *n, struct hr_error *err)
{
	uint32_t nnodes = hr_heap_graph_count(g), goal;
	struct bfs b = { .avoid = avoid, .nroots = hr_heap_graph_root_count(g) };
	int rc = 1;

	*path = NULL;
	*n = 0;
	goal = b.nroots + 1 + target;
	if (goal >= nnodes)
		return 1;
	b.from = malloc((size_t)nnodes * sizeof(*b.from));
	b.queue = malloc((size_t)nnodes * sizeof(*b.queue));
	if (!b.from || !b.queue) {
		rc = HR_ENOMEM;
		goto out;
	}
	for (uint32_t v = 0; v < nnodes; v++)
		b.from[v] = HR_DOM_NONE;
	b.from[0] = 0;
	b.queue[b.tail++] = 0;
	while (b.head < b.tail && b.from[goal] == HR_DOM_NONE) {
		b.expanding = b.queue[b.head++];
		if ((rc = hr_heap_graph_successors(g, b.expanding, emit_reach, &b)))
			goto out;
		rc = 1;
	}
	if (b.from[goal] != HR_DOM_NONE)
		rc = take_path(&b, goal, path, n);
out:
	free(b.from);
	free(b.queue);
	if (rc == HR_ENOMEM)
		hr_error_set(err, rc, "out of memory for the paths to an object");
	return rc;
}
