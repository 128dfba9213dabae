/* SPDX-License-Identifier: Apache-2.0 */
/*
 * shared_groups.c - memory that no single root retains, grouped by the roots that
 * share it (see dominators.h).
 *
 * An object whose immediate dominator is the virtual root (a "shared top") is reached
 * from two or more root variables by paths that meet nowhere before it. What it
 * dominates goes with it. Which roots share it: those with an edge into it from what
 * they retain, and, through the shared tops that lead to it, theirs. That is a
 * propagation over a small graph: each edge u -> v of the heap graph whose target is a
 * shared top becomes an edge top(u) -> v, top(u) being the child of the virtual root
 * that dominates u (a root variable, or a shared top). The sets of roots flow along
 * those edges to a fixpoint; they are capped at HR_GROUP_ROOTS_MAX names and a flag
 * for more, so they only grow and the propagation ends.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "heapref/dominators.h"

/*
 * An edge of the condensed graph, from a root variable or shared top (a graph node) to
 * a shared top (its index in tops), as one key: from << 32 | to.
 */
static uint64_t top_edge(uint32_t from, uint32_t to)
{
	return (uint64_t)from << 32 | to;
}

static uint32_t edge_from(uint64_t e)
{
	return (uint32_t)(e >> 32);
}

static uint32_t edge_to(uint64_t e)
{
	return (uint32_t)e;
}

struct rootset {
	uint32_t id[HR_GROUP_ROOTS_MAX]; /* root variable nodes, ascending */
	uint8_t n;
	bool more;
};

struct grouping {
	const struct hr_heap_dominators *hd;
	uint32_t *top;        /* by hr_heap_dom_inner_index(): the child of the virtual root
			       * dominating the node */
	uint32_t *tops;       /* the shared tops, ascending */
	uint64_t *is_top;     /* a bit per node: one of tops */
	uint32_t *top_rank;   /* per word of is_top: the tops before it */
	uint32_t ntops;
	uint64_t *edges[2];   /* find_edges(), by half of the nodes: until placed */
	size_t nedges[2];
	struct set_table *table; /* the distinct sets of roots (see below) */
	uint32_t *set_of;     /* [ntops]: the index of each top's set in the table */
};

/*
 * find_edges() over the nodes from .. to - 1, on a thread of its own: the edges it
 * finds.
 */
struct edge_part {
	const struct grouping *gr;
	const struct hr_heap_graph *g;
	uint32_t from, to;
	struct hr_graph_reader reader;
	uint64_t *edges;
	size_t nedges, edges_cap;
	uint32_t expanding_index; /* hr_heap_dom_inner_index() of the node being read */
	int status;
};

/*
 * The index of shared top node v, or UINT32_MAX if v is not one: its rank among the
 * bits of is_top (tops are ascending), from the count before its word.
 */
static uint32_t top_index(const struct grouping *gr, uint32_t v)
{
	uint64_t w = gr->is_top[v >> 6];

	if (!(w >> (v & 63) & 1))
		return UINT32_MAX;
	return gr->top_rank[v >> 6] +
	       (uint32_t)__builtin_popcountll(w & ((UINT64_C(1) << (v & 63)) - 1));
}

/* The shared tops: the objects whose immediate dominator is the virtual root. */
static int find_tops(struct grouping *gr)
{
	const struct hr_heap_dominators *hd = gr->hd;
	uint32_t nnodes = hr_heap_dom_count(hd), nroots = hr_heap_dom_root_count(hd);
	size_t ntops = 0, cap = 0, nwords = hr_bit_words(nnodes);
	uint32_t rank = 0;

	gr->is_top = calloc(nwords + 1, sizeof(*gr->is_top));
	gr->top_rank = malloc((nwords + 1) * sizeof(*gr->top_rank));
	if (!gr->is_top || !gr->top_rank)
		return HR_ENOMEM;
	for (uint32_t v = nroots + 1; v < nnodes; v++) {
		if (hr_heap_dom_idom(hd, v) != 0)
			continue;
		if (!hr_array_push((void **)&gr->tops, &ntops, &cap, sizeof(*gr->tops)))
			return HR_ENOMEM;
		gr->tops[ntops - 1] = v;
		hr_bit_set(gr->is_top, v);
	}
	for (size_t k = 0; k < nwords; k++) {
		gr->top_rank[k] = rank;
		rank += (uint32_t)__builtin_popcountll(gr->is_top[k]);
	}
	gr->ntops = (uint32_t)ntops;
	return HR_OK;
}

/*
 * top[] for the nodes that may have successors (by hr_heap_dom_inner_index()): the
 * children of the virtual root are their own, the others take their dominator's, in
 * inner index order (a node after its dominator). The objects without pointers are
 * left out: no edge starts at them.
 */
static int find_top_of_each(struct grouping *gr)
{
	const struct hr_heap_dominators *hd = gr->hd;
	uint32_t n = hr_heap_dom_inner_count(hd), nroots = hr_heap_dom_root_count(hd);

	if (!(gr->top = malloc(((size_t)n + 1) * sizeof(*gr->top))))
		return HR_ENOMEM;
	for (uint32_t k = 0; k < n; k++)
		gr->top[k] = HR_DOM_NONE;
	for (uint32_t r = 1; r <= nroots; r++)
		gr->top[hr_heap_dom_inner_index(hd, r)] = r;
	for (uint32_t t = 0; t < gr->ntops; t++) {
		uint32_t k = hr_heap_dom_inner_index(hd, gr->tops[t]);

		if (k != HR_DOM_NONE)
			gr->top[k] = gr->tops[t];
	}
	for (uint32_t k = 1; k < n; k++)
		if (gr->top[k] == HR_DOM_NONE)
			gr->top[k] = gr->top[hr_heap_dom_inner_parent(hd, k)];
	return HR_OK;
}

static void emit_edge(void *ctx, uint32_t v, bool sink)
{
	struct edge_part *part = ctx;
	const struct grouping *gr = part->gr;
	uint32_t to = top_index(gr, v), from = gr->top[part->expanding_index];
	uint64_t *e;

	(void)sink; /* a sink is a node like another here */
	if (to == UINT32_MAX || from == v || part->status)
		return;
	if (part->nedges && part->edges[part->nedges - 1] == top_edge(from, to))
		return; /* the same as the last: many words of one object into one top */
	e = hr_array_push((void **)&part->edges, &part->nedges, &part->edges_cap, sizeof(*e));
	if (!e) {
		part->status = HR_ENOMEM;
		return;
	}
	*e = top_edge(from, to);
}

static void *find_part_edges(void *arg)
{
	struct edge_part *part = arg;
	const struct hr_heap_dominators *hd = part->gr->hd;

	for (uint32_t v = part->from; v < part->to && !part->status; v++) {
		if ((part->expanding_index = hr_heap_dom_inner_index(hd, v)) == HR_DOM_NONE)
			continue; /* not reached, or no pointers */
		if (hr_heap_graph_successors_in(part->g, &part->reader, v, emit_edge, part))
			part->status = HR_ENOMEM;
	}
	hr_graph_reader_release(&part->reader);
	return NULL;
}

#define EDGES_SPLIT_MIN 4096 /* nodes: fewer are read on one thread */

/*
 * Every edge of the heap graph into a shared top, as top(u) -> the top: once or more
 * (the same edge found again, from another object under the same top, changes no set).
 * The nodes are read in two halves, on two threads when there are two processors (on
 * 11 million nodes of small objects, reading them took 2.5 s); the halves follow each
 * other in node order either way.
 */
static int find_edges(struct grouping *gr, const struct hr_heap_graph *g)
{
	uint32_t nnodes = hr_heap_dom_count(gr->hd), mid = nnodes > 2 ? nnodes / 2 : 1;
	struct edge_part part[2] = { { .gr = gr, .g = g, .from = 1, .to = mid },
				     { .gr = gr, .g = g, .from = mid, .to = nnodes } };
	pthread_t thread;
	bool threaded = nnodes >= EDGES_SPLIT_MIN && hr_cpus_usable() >= 2 &&
			!pthread_create(&thread, NULL, find_part_edges, &part[1]);

	find_part_edges(&part[0]);
	if (threaded)
		pthread_join(thread, NULL);
	else
		find_part_edges(&part[1]);
	for (int k = 0; k < 2; k++) {
		gr->edges[k] = part[k].edges;
		gr->nedges[k] = part[k].nedges;
	}
	return part[0].status ? part[0].status : part[1].status;
}

/* Adds root variable r to s; whether s changed. */
static bool set_add(struct rootset *s, uint32_t r)
{
	uint8_t i = 0;

	while (i < s->n && s->id[i] < r)
		i++;
	if (i < s->n && s->id[i] == r)
		return false;
	if (s->n == HR_GROUP_ROOTS_MAX) {
		bool changed = !s->more;

		s->more = true;
		if (i == s->n)
			return changed;
		s->n--; /* keep the lowest ids: the last one goes */
		changed = true;
		memmove(&s->id[i + 1], &s->id[i], (size_t)(s->n - i) * sizeof(s->id[0]));
		s->id[i] = r;
		s->n++;
		return changed;
	}
	memmove(&s->id[i + 1], &s->id[i], (size_t)(s->n - i) * sizeof(s->id[0]));
	s->id[i] = r;
	s->n++;
	return true;
}

static bool set_union(struct rootset *into, const struct rootset *from)
{
	bool changed = false;

	for (uint8_t i = 0; i < from->n; i++)
		changed |= set_add(into, from->id[i]);
	if (from->more && !into->more) {
		into->more = true;
		changed = true;
	}
	return changed;
}

static int cmp_sets(const struct rootset *a, const struct rootset *b)
{
	if (a->n != b->n)
		return a->n < b->n ? -1 : 1;
	for (uint8_t i = 0; i < a->n; i++)
		if (a->id[i] != b->id[i])
			return a->id[i] < b->id[i] ? -1 : 1;
	return (int)a->more - (int)b->more;
}

static uint64_t set_hash(const struct rootset *r)
{
	uint64_t h = (uint64_t)r->n << 1 | r->more;

	for (uint8_t i = 0; i < r->n; i++)
		h = (h ^ r->id[i]) * 0x100000001b3ull;
	return h ^ h >> 29;
}

/*
 * The distinct sets of roots, each kept once; a top holds the index of its set (0, the
 * empty set, to start). Sets only grow, by a few steps each, and there are few distinct
 * ones: 4 bytes a top, not the 20 of a set (small-1g: 9.75M tops), and a group is an
 * index (sorting 10 million tops by their sets took seconds and twice their memory).
 * What adding to a set gives is cached by the pair of indexes: most tops get the same
 * roots in the same order.
 */
#define SET_CACHE 4096
#define SET_ROOT (UINT32_C(1) << 31) /* set_step()'s b: a root, not a set's index */

struct set_table {
	struct rootset *v;   /* by index */
	size_t n, cap;
	uint32_t *slot;      /* index + 1, 0 empty; by set_hash() */
	size_t nslots;       /* a power of two */
	struct set_step {
		uint32_t a, b, sum; /* set a with set b (or root b | SET_ROOT) added is set sum */
	} cache[SET_CACHE];
	int status;
};

static int grow_slots(struct set_table *st)
{
	size_t cap = st->nslots ? 2 * st->nslots : 64, i;
	uint32_t *slot = calloc(cap, sizeof(*slot));

	if (!slot)
		return HR_ENOMEM;
	for (size_t k = 0; k < st->n; k++) {
		for (i = set_hash(&st->v[k]) & (cap - 1); slot[i]; i = (i + 1) & (cap - 1))
			;
		slot[i] = (uint32_t)k + 1;
	}
	free(st->slot);
	st->slot = slot;
	st->nslots = cap;
	return HR_OK;
}

/* The index of set r, added if it is new; UINT32_MAX (st->status set) when out of memory. */
static uint32_t intern(struct set_table *st, const struct rootset *r)
{
	size_t i;

	if (2 * (st->n + 1) > st->nslots && (st->status = grow_slots(st)))
		return UINT32_MAX;
	for (i = set_hash(r) & (st->nslots - 1); st->slot[i]; i = (i + 1) & (st->nslots - 1))
		if (!cmp_sets(&st->v[st->slot[i] - 1], r))
			return st->slot[i] - 1;
	if (st->n >= SET_ROOT - 1 || /* an index must not look like a root to set_step() */
	    hr_array_reserve((void **)&st->v, &st->cap, st->n + 1, sizeof(*st->v))) {
		st->status = HR_ENOMEM;
		return UINT32_MAX;
	}
	st->v[st->n] = *r;
	st->slot[i] = (uint32_t)++st->n;
	return (uint32_t)(st->n - 1);
}

static struct set_table *set_table_new(void)
{
	struct set_table *st = calloc(1, sizeof(*st));

	if (st && intern(st, &(struct rootset){ .n = 0 }) != 0) { /* index 0: the empty set */
		free(st);
		return NULL;
	}
	return st;
}

static void set_table_free(struct set_table *st)
{
	if (!st)
		return;
	free(st->v);
	free(st->slot);
	free(st);
}

/*
 * Set a with root r added (b = r | SET_ROOT) or with set b's roots (b an index), by
 * index: a itself when nothing changes, or when out of memory (st->status set).
 */
static uint32_t set_step(struct set_table *st, uint32_t a, uint32_t b)
{
	struct set_step *c = &st->cache[(a * 0x9e3779b1u ^ b * 0x85ebca6bu) >> 20 & (SET_CACHE - 1)];
	struct rootset sum;
	uint32_t k;
	bool changed;

	if (a == b)
		return a;
	if (c->sum && c->a == a && c->b == b)
		return c->sum - 1;
	sum = st->v[a]; /* a copy: interning may move the table */
	changed = b & SET_ROOT ? set_add(&sum, b & ~SET_ROOT) : set_union(&sum, &st->v[b]);
	if ((k = changed ? intern(st, &sum) : a) == UINT32_MAX)
		return a; /* st->status says why */
	*c = (struct set_step){ a, b, k + 1 };
	return k;
}

/*
 * The root variables' edges of half k applied to the sets of their targets, and only
 * the edges between tops kept, in place: on small-1g 19.6M of 29.4M edges are root
 * variables' (records-1g: all but 13 of 7.0M), and the block shrinks before the halves
 * are joined and the table below is made beside it.
 */
static void apply_root_edges(struct grouping *gr, int k)
{
	uint32_t nroots = hr_heap_dom_root_count(gr->hd);
	uint64_t *e = gr->edges[k], *shrunk;
	size_t kept = 0;

	for (size_t i = 0; i < gr->nedges[k]; i++) {
		uint32_t *set = &gr->set_of[edge_to(e[i])];

		if (edge_from(e[i]) <= nroots)
			*set = set_step(gr->table, *set, edge_from(e[i]) | SET_ROOT);
		else
			e[kept++] = e[i];
	}
	gr->nedges[k] = kept;
	shrunk = realloc(e, kept * sizeof(*e) + 1);
	gr->edges[k] = shrunk ? shrunk : e; /* else the block stays as it was: as good */
}

/* The edges between tops of both halves, in node order, in edges[0]. */
static int join_halves(struct grouping *gr)
{
	size_t cap = gr->nedges[0], n = gr->nedges[0] + gr->nedges[1];

	if (hr_array_reserve((void **)&gr->edges[0], &cap, n + 1, sizeof(*gr->edges[0])))
		return HR_ENOMEM;
	if (gr->nedges[1]) /* (memcpy() from NULL, even of nothing, is undefined) */
		memcpy(gr->edges[0] + gr->nedges[0], gr->edges[1],
		       gr->nedges[1] * sizeof(*gr->edges[1]));
	gr->nedges[0] = n;
	free(gr->edges[1]);
	gr->edges[1] = NULL;
	gr->nedges[1] = 0;
	return HR_OK;
}

/*
 * The edges between tops placed, by counting, as a table by source: first[t] ..
 * first[t + 1] - 1 index the targets of top t's edges, and indeg[] counts each top's.
 * No sort (on small-1g, sorting the edges was a fifth of the search, its buffer 235 MB):
 * the sets are unions of roots, capped at the lowest ids, the same in whatever order
 * the edges come; an edge found twice counts twice in indeg[] and is followed twice,
 * changing nothing. The edges are freed once placed.
 */
static int place_top_edges(struct grouping *gr, size_t *first, uint32_t *indeg,
			   uint32_t **targets)
{
	const uint64_t *e = gr->edges[0];
	size_t n = gr->nedges[0];

	for (size_t i = 0; i < n; i++) {
		first[top_index(gr, edge_from(e[i])) + 1]++;
		indeg[edge_to(e[i])]++;
	}
	if (!(*targets = malloc(n * sizeof(**targets) + 1)))
		return HR_ENOMEM;
	for (uint32_t t = 0; t < gr->ntops; t++)
		first[t + 1] += first[t];
	for (size_t i = 0; i < n; i++) /* first[t] ends as the start of t + 1 */
		(*targets)[first[top_index(gr, edge_from(e[i]))]++] = edge_to(e[i]);
	for (uint32_t t = gr->ntops; t >= 1; t--)
		first[t] = first[t - 1];
	first[0] = 0;
	free(gr->edges[0]);
	gr->edges[0] = NULL;
	return HR_OK;
}

/*
 * The sets of roots, flowed along the edges to a fixpoint. First in topological order
 * (Kahn's: a top once all the tops with edges into it are done), so that where the
 * tops form no cycle each edge is followed once; then, for the tops cycles left, with a
 * worklist. (A worklist alone can carry a change down a chain of tops once per root
 * above it: quadratic on a list whose nodes each a root also holds.)
 */
static int propagate(struct grouping *gr)
{
	size_t *first = calloc((size_t)gr->ntops + 2, sizeof(*first)); /* edges from top i */
	uint32_t *indeg = calloc((size_t)gr->ntops + 1, sizeof(*indeg)), *work = NULL;
	uint32_t *targets = NULL;
	uint8_t *queued = NULL;
	size_t head = 0, nwork = 0;
	int rc = HR_ENOMEM;

	gr->set_of = calloc((size_t)gr->ntops + 1, sizeof(*gr->set_of));
	if (!first || !indeg || !gr->set_of || !(gr->table = set_table_new()))
		goto out;
	apply_root_edges(gr, 0);
	apply_root_edges(gr, 1);
	if ((rc = join_halves(gr)) || (rc = place_top_edges(gr, first, indeg, &targets)) ||
	    (rc = gr->table->status))
		goto out;
	rc = HR_ENOMEM;
	work = malloc(((size_t)gr->ntops + 1) * sizeof(*work));
	queued = calloc((size_t)gr->ntops + 1, 1);
	if (!work || !queued)
		goto out;
	for (uint32_t t = 0; t < gr->ntops; t++)
		if (!indeg[t])
			work[nwork++] = t;
	for (; head < nwork; head++) { /* Kahn's order: work[] only grows */
		uint32_t t = work[head];

		for (size_t i = first[t]; i < first[t + 1]; i++) {
			uint32_t to = targets[i];

			gr->set_of[to] = set_step(gr->table, gr->set_of[to], gr->set_of[t]);
			if (!--indeg[to])
				work[nwork++] = to;
		}
	}
	nwork = 0; /* what cycles left: a worklist to the fixpoint */
	for (uint32_t t = 0; t < gr->ntops; t++)
		if (indeg[t]) {
			work[nwork++] = t;
			queued[t] = 1;
		}
	while (nwork) {
		uint32_t t = work[--nwork];

		queued[t] = 0;
		for (size_t i = first[t]; i < first[t + 1]; i++) {
			uint32_t to = targets[i], was = gr->set_of[to];

			gr->set_of[to] = set_step(gr->table, was, gr->set_of[t]);
			if (gr->set_of[to] != was && !queued[to]) {
				queued[to] = 1;
				work[nwork++] = to;
			}
		}
	}
	rc = gr->table->status;
out:
	free(targets);
	free(work);
	free(indeg);
	free(first);
	free(queued);
	return rc;
}


static int cmp_groups(const void *pa, const void *pb)
{
	const struct hr_shared_group *a = pa, *b = pb;

	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	return a->biggest < b->biggest ? -1 : a->biggest > b->biggest;
}

/* A group's tops, from the tops in node order: each added to its set's group. */
static int fill_groups(struct grouping *gr, const uint32_t *group, struct hr_shared_group *v,
		       size_t n)
{
	for (size_t k = 0; k < n; k++)
		if (!(v[k].top_nodes = malloc((size_t)v[k].tops * sizeof(*v[k].top_nodes))))
			return HR_ENOMEM;
	for (size_t k = 0; k < n; k++)
		v[k].tops = 0;
	for (uint32_t t = 0; t < gr->ntops; t++) {
		struct hr_shared_group *g = &v[group[gr->set_of[t]]];
		struct hr_dom_node node = hr_heap_dom_node(gr->hd, gr->tops[t]);

		if (!g->tops || node.retained_bytes > hr_heap_dom_node(gr->hd, g->biggest).retained_bytes)
			g->biggest = gr->tops[t]; /* ties: the lowest node */
		g->top_nodes[g->tops++] = gr->tops[t];
		g->bytes += node.retained_bytes;
		g->objects += node.retained_objects;
	}
	return HR_OK;
}

/* One group per set of roots some top has, with what its tops retain, biggest first. */
static int make_groups(struct grouping *gr, struct hr_shared_group **out, size_t *nout)
{
	const struct set_table *st = gr->table;
	uint32_t *group = malloc((st->n + 1) * sizeof(*group)); /* by set: its group + 1 */
	struct hr_shared_group *v = NULL;
	size_t n = 0;
	int rc = HR_ENOMEM;

	if (!group)
		return HR_ENOMEM;
	memset(group, 0, (st->n + 1) * sizeof(*group));
	for (uint32_t t = 0; t < gr->ntops; t++) /* in the order of their first tops */
		if (!group[gr->set_of[t]])
			group[gr->set_of[t]] = (uint32_t)++n;
	if (!(v = calloc(n + 1, sizeof(*v))))
		goto out;
	for (size_t k = 0; k < st->n; k++) {
		struct hr_shared_group *g;

		if (!group[k])
			continue;
		g = &v[--group[k]]; /* now the group itself */
		g->nroots = st->v[k].n;
		g->more_roots = st->v[k].more;
		memcpy(g->roots, st->v[k].id, sizeof(g->roots));
	}
	for (uint32_t t = 0; t < gr->ntops; t++)
		v[group[gr->set_of[t]]].tops++;
	if ((rc = fill_groups(gr, group, v, n))) {
		hr_shared_groups_free(v, n);
		goto out;
	}
	qsort(v, n, sizeof(*v), cmp_groups);
	*out = v;
	*nout = n;
out:
	free(group);
	return rc;
}

void hr_shared_groups_free(struct hr_shared_group *groups, size_t n)
{
	for (size_t i = 0; groups && i < n; i++)
		free(groups[i].top_nodes);
	free(groups);
}

int hr_heap_dom_shared_groups(const struct hr_heap_dominators *hd, uint64_t min_total,
			      struct hr_shared_group **groups, size_t *n, struct hr_error *err)
{
	struct grouping gr = { .hd = hd };
	uint64_t total = 0;
	int rc;

	*groups = NULL;
	*n = 0;
	if ((rc = find_tops(&gr)))
		goto out;
	for (uint32_t t = 0; t < gr.ntops; t++)
		total += hr_heap_dom_node(hd, gr.tops[t]).retained_bytes;
	if (!gr.ntops || total < min_total)
		goto out;
	if ((rc = find_top_of_each(&gr)) || (rc = find_edges(&gr, hr_heap_dom_graph(hd))))
		goto out;
	free(gr.top); /* 4 bytes an inner node: given back before the sets are made */
	gr.top = NULL;
	if ((rc = propagate(&gr)))
		goto out;
	rc = make_groups(&gr, groups, n);
out:
	free(gr.top);
	free(gr.tops);
	free(gr.is_top);
	free(gr.top_rank);
	free(gr.edges[0]);
	free(gr.edges[1]);
	free(gr.set_of);
	set_table_free(gr.table);
	if (rc)
		return hr_error_set(err, rc, "out of memory for the groups of shared memory");
	return HR_OK;
}
