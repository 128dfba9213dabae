/* SPDX-License-Identifier: Apache-2.0 */
/*
 * chain_growth.c - which chains grew most between two trees (see chains.h): the trees
 * are merged by chain (the names from the root, never node ids) into one union tree
 * that holds each node's own value in both; cumulative values are summed in one
 * backward sweep (a node's id is above its parent's); then each root's growth is
 * followed down while one child keeps most of it.
 */
#include <stdlib.h>
#include <string.h>

#include "heapref/chains.h"

int hr_chains_merge(struct hr_chains *u, const struct hr_chains *t, uint32_t *to)
{
	size_t n = hr_chains_count(t);

	to[0] = HR_CHAINS_TOP;
	for (size_t i = 1; i < n; i++) {
		const struct hr_chain_node *node = hr_chains_node(t, (uint32_t)i);
		const char *name = hr_chains_name(t, node->name);

		to[i] = hr_chains_child(u, to[node->parent], name, strlen(name));
		if (to[i] == HR_CHAINS_NONE)
			return HR_ENOMEM;
	}
	return HR_OK;
}

struct sides {
	uint64_t old_bytes, old_objects, new_bytes, new_objects;
};

struct growth_work {
	struct hr_chains *u;
	size_t n;
	struct sides *v;       /* per union node, cumulative after sum_up() */
	uint32_t *biggest;     /* per union node: the child that grew most, or NONE */
};

static int64_t grew(uint64_t a, uint64_t b)
{
	return b >= a ? (int64_t)(b - a) : -(int64_t)(a - b);
}

static int64_t node_growth(const struct growth_work *w, uint32_t i)
{
	return grew(w->v[i].old_bytes, w->v[i].new_bytes);
}

/* Own values of both trees into the union's nodes, then summed up. */
static void fill_values(struct growth_work *w, const struct hr_chains *t, const uint32_t *to,
			bool is_new)
{
	for (size_t i = 1; i < hr_chains_count(t); i++) {
		const struct hr_chain_node *node = hr_chains_node(t, (uint32_t)i);
		struct sides *s = &w->v[to[i]];

		if (is_new) {
			s->new_bytes += node->bytes;
			s->new_objects += node->objects;
		} else {
			s->old_bytes += node->bytes;
			s->old_objects += node->objects;
		}
	}
}

static void sum_up(struct growth_work *w)
{
	for (size_t i = w->n; i-- > 1;) {
		uint32_t p = hr_chains_node(w->u, (uint32_t)i)->parent;

		w->v[p].old_bytes += w->v[i].old_bytes;
		w->v[p].old_objects += w->v[i].old_objects;
		w->v[p].new_bytes += w->v[i].new_bytes;
		w->v[p].new_objects += w->v[i].new_objects;
		if (w->biggest[p] == HR_CHAINS_NONE || node_growth(w, (uint32_t)i) >
							       node_growth(w, w->biggest[p]))
			w->biggest[p] = (uint32_t)i;
	}
}

static int cmp_growth(const void *pa, const void *pb)
{
	const struct hr_chain_growth *a = pa, *b = pb;

	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	return strcmp(a->root, b->root);
}

/* One row per root that grew: its growth, and the chain down to where it piled up. */
static int take_rows(const struct growth_work *w, double keep, struct hr_chain_growth **out,
		     size_t *nout)
{
	struct hr_chain_growth *rows = NULL;
	size_t n = 0, cap = 0;

	for (uint32_t r = 1; r < w->n; r++) {
		struct hr_chain_growth *g;
		uint32_t v = r;

		if (hr_chains_node(w->u, r)->parent != HR_CHAINS_TOP || node_growth(w, r) <= 0)
			continue;
		while (w->biggest[v] != HR_CHAINS_NONE &&
		       (double)node_growth(w, w->biggest[v]) >= keep * (double)node_growth(w, v))
			v = w->biggest[v];
		if (!(g = hr_array_push((void **)&rows, &n, &cap, sizeof(*g))))
			goto nomem;
		*g = (struct hr_chain_growth){
			.bytes = node_growth(w, r),
			.objects = grew(w->v[r].old_objects, w->v[r].new_objects),
			.old_bytes = w->v[r].old_bytes, .new_bytes = w->v[r].new_bytes,
			.chain_bytes = node_growth(w, v),
			.chain_objects = grew(w->v[v].old_objects, w->v[v].new_objects) };
		if (!(g->root = strdup(hr_chains_name(w->u, hr_chains_node(w->u, r)->name))) ||
		    !(g->chain = hr_chains_text(w->u, v)))
			goto nomem;
	}
	if (n)
		qsort(rows, n, sizeof(*rows), cmp_growth);
	*out = rows;
	*nout = n;
	return HR_OK;
nomem:
	hr_chain_growth_free(rows, n);
	return HR_ENOMEM;
}

int hr_chains_growth(const struct hr_chains *old, const struct hr_chains *new, double keep,
		     struct hr_chain_growth **rows, size_t *nrows)
{
	struct growth_work w = { .u = hr_chains_new(0) };
	uint32_t *to_old = malloc((hr_chains_count(old) + 1) * sizeof(*to_old));
	uint32_t *to_new = malloc((hr_chains_count(new) + 1) * sizeof(*to_new));
	int rc = HR_ENOMEM;

	*rows = NULL;
	*nrows = 0;
	if (!w.u || !to_old || !to_new || hr_chains_merge(w.u, old, to_old) ||
	    hr_chains_merge(w.u, new, to_new))
		goto out;
	w.n = hr_chains_count(w.u);
	w.v = calloc(w.n, sizeof(*w.v));
	w.biggest = malloc(w.n * sizeof(*w.biggest));
	if (!w.v || !w.biggest)
		goto out;
	for (size_t i = 0; i < w.n; i++)
		w.biggest[i] = HR_CHAINS_NONE;
	fill_values(&w, old, to_old, false);
	fill_values(&w, new, to_new, true);
	sum_up(&w);
	rc = take_rows(&w, keep, rows, nrows);
out:
	free(to_old);
	free(to_new);
	free(w.v);
	free(w.biggest);
	hr_chains_free(w.u);
	return rc;
}

void hr_chain_growth_free(struct hr_chain_growth *rows, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(rows[i].root);
		free(rows[i].chain);
	}
	free(rows);
}
