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

static void emit_reach(void *ctx, uint32_t v, bool sink)
{
	struct bfs *b = ctx;

	(void)sink; /* a sink is a node like another here */
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

/*
 * --- from one node ------------------------------------------------------------------------
 * The queue keeps every node visited with the position of the one it came from, so the
 * path is read back from the queue; a bit per graph node says what was visited (a hash
 * set of the visited nodes did before: on small-1g's shared maps a search visits
 * millions, and the bits took 0.6 s off the suspects phase there, in one run).
 */
struct visit {
	uint32_t node;
	uint32_t came_from; /* position in the queue; its top bit: the node is a sink */
};

#define VISIT_SINK (UINT32_C(1) << 31)
#define VISITS_AHEAD 4 /* queued nodes whose contents are prefetched ahead of their turn */

struct local_bfs {
	struct visit *queue;
	size_t n, cap;
	uint64_t *visited;   /* by graph node */
	uint32_t expanding;  /* queue position being expanded */
	uint32_t goal;
	bool found;
	int status;
	hr_graph_node_filter *allow; /* or NULL: every node */
	void *allow_ctx;
};

static void emit_local(void *ctx, uint32_t v, bool sink)
{
	struct local_bfs *b = ctx;
	struct visit *q;

	if (b->found || b->status || hr_bit_get(b->visited, v) ||
	    (b->allow && v != b->goal && !b->allow(b->allow_ctx, v)))
		return;
	hr_bit_set(b->visited, v);
	if (!(q = hr_array_push((void **)&b->queue, &b->n, &b->cap, sizeof(*q)))) {
		b->status = HR_ENOMEM;
		return;
	}
	*q = (struct visit){ v, b->expanding | (sink ? VISIT_SINK : 0) };
	b->found = v == b->goal;
}

int hr_heap_graph_path_from(struct hr_heap_graph *g, uint32_t from, uint32_t to,
			    hr_graph_node_filter *allow, void *allow_ctx, uint32_t **path, size_t *n,
			    struct hr_error *err)
{
	struct local_bfs b = { .goal = to, .allow = allow, .allow_ctx = allow_ctx };
	int rc = 1;

	*path = NULL;
	*n = 0;
	if (from >= hr_heap_graph_count(g) || to >= hr_heap_graph_count(g))
		return 1;
	/* calloc: the pages of the bits no search touches are never written */
	if (!(b.visited = calloc(hr_bit_words(hr_heap_graph_count(g)), sizeof(*b.visited)))) {
		hr_error_set(err, HR_ENOMEM, "out of memory for the path to an object");
		return HR_ENOMEM;
	}
	emit_local(&b, from, false);
	for (size_t head = 0; head < b.n && !b.found && !b.status; head++) {
		if (head + VISITS_AHEAD < b.n && !(b.queue[head + VISITS_AHEAD].came_from & VISIT_SINK))
			hr_heap_graph_prefetch(g, b.queue[head + VISITS_AHEAD].node);
		if (b.queue[head].came_from & VISIT_SINK)
			continue; /* a sink leads nowhere: its contents are not worth a look */
		b.expanding = (uint32_t)head;
		if (hr_heap_graph_successors(g, b.queue[head].node, emit_local, &b))
			b.status = HR_ENOMEM;
	}
	if (b.status) {
		rc = b.status;
	} else if (b.found) {
		size_t len = 1;

		for (size_t at = b.n - 1; at; at = b.queue[at].came_from & ~VISIT_SINK)
			len++;
		if (!(*path = malloc(len * sizeof(**path)))) {
			rc = HR_ENOMEM;
		} else {
			*n = len;
			for (size_t at = b.n - 1;; at = b.queue[at].came_from & ~VISIT_SINK) {
				(*path)[--len] = b.queue[at].node;
				if (!at)
					break;
			}
			rc = HR_OK;
		}
	}
	free(b.queue);
	free(b.visited);
	if (rc == HR_ENOMEM)
		hr_error_set(err, rc, "out of memory for the path to an object");
	return rc;
}
