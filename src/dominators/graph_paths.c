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
 * --- from one node: memory by what is visited -------------------------------------------
 * The queue keeps every node visited with the position of the one it came from, so the
 * path is read back from the queue; an open-addressing set says what was visited.
 */
struct visit {
	uint32_t node;
	uint32_t came_from; /* position in the queue */
};

struct local_bfs {
	struct visit *queue;
	size_t n, cap;
	uint32_t *set;       /* node + 1, 0 empty */
	size_t set_cap;      /* a power of two */
	size_t set_used;
	uint32_t expanding;  /* queue position being expanded */
	uint32_t goal;
	bool found;
	int status;
	hr_graph_node_filter *allow; /* or NULL: every node */
	void *allow_ctx;
};

static size_t slot_of(uint32_t v, size_t cap)
{
	return (size_t)((v * 0x9e3779b97f4a7c15ull) >> 17) & (cap - 1);
}

/* Adds v to the visited set; false when it was there. */
static bool visit_once(struct local_bfs *b, uint32_t v)
{
	size_t i;

	if (2 * (b->set_used + 1) > b->set_cap) {
		size_t cap = b->set_cap ? 2 * b->set_cap : 1024;
		uint32_t *set = calloc(cap, sizeof(*set));

		if (!set) {
			b->status = HR_ENOMEM;
			return false;
		}
		for (size_t k = 0; k < b->set_cap; k++) {
			if (!b->set[k])
				continue;
			for (i = slot_of(b->set[k] - 1, cap); set[i]; i = (i + 1) & (cap - 1))
				;
			set[i] = b->set[k];
		}
		free(b->set);
		b->set = set;
		b->set_cap = cap;
	}
	for (i = slot_of(v, b->set_cap); b->set[i]; i = (i + 1) & (b->set_cap - 1))
		if (b->set[i] == v + 1)
			return false;
	b->set[i] = v + 1;
	b->set_used++;
	return true;
}

static void emit_local(void *ctx, uint32_t v, bool sink)
{
	struct local_bfs *b = ctx;
	struct visit *q;

	(void)sink; /* a sink is a node like another here */
	if (b->found || b->status || (b->allow && v != b->goal && !b->allow(b->allow_ctx, v)) ||
	    !visit_once(b, v))
		return;
	if (!(q = hr_array_push((void **)&b->queue, &b->n, &b->cap, sizeof(*q)))) {
		b->status = HR_ENOMEM;
		return;
	}
	*q = (struct visit){ v, b->expanding };
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
	emit_local(&b, from, false);
	for (size_t head = 0; head < b.n && !b.found && !b.status; head++) {
		b.expanding = (uint32_t)head;
		if (hr_heap_graph_successors(g, b.queue[head].node, emit_local, &b))
			b.status = HR_ENOMEM;
	}
	if (b.status) {
		rc = b.status;
	} else if (b.found) {
		size_t len = 1;

		for (size_t at = b.n - 1; at; at = b.queue[at].came_from)
			len++;
		if (!(*path = malloc(len * sizeof(**path)))) {
			rc = HR_ENOMEM;
		} else {
			*n = len;
			for (size_t at = b.n - 1;; at = b.queue[at].came_from) {
				(*path)[--len] = b.queue[at].node;
				if (!at)
					break;
			}
			rc = HR_OK;
		}
	}
	free(b.queue);
	free(b.set);
	if (rc == HR_ENOMEM)
		hr_error_set(err, rc, "out of memory for the path to an object");
	return rc;
}
