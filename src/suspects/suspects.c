/* SPDX-License-Identifier: Apache-2.0 */
/*
 * suspects.c - which roots (or groups of roots) keep a large share of the heap, and
 * where in each the memory piles up (see suspects.h). The descriptions of objects
 * (what a map, a slice, a list is) are in describe.c.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heapref/suspects.h"
#include "suspects_internal.h"

#define NO_LABEL 0xffu
/* nodes from which the tally is split in two (the test programs have more): a thread
 * costs some tens of microseconds */
#define TALLY_SPLIT_MIN 4096u

const char *hr_pile_kind_name(unsigned kind)
{
	static const char *const names[] = { "object", "map", "slice", "list", "channel",
					     "goroutines", "shared" };

	return kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "object";
}

/* A suspect before it is described: what retains it, from which graph node. */
struct candidate {
	enum hr_suspect_kind kind;
	uint64_t bytes, objects;
	uint32_t start;                     /* the root variable, or the group's biggest top */
	uint32_t roots[HR_GROUP_ROOTS_MAX]; /* root variable nodes */
	uint8_t nroots;
	bool more_roots;
	uint32_t *tops;                     /* a group's: its tops, ascending (owned) */
	uint32_t ntops;
	bool spread;                        /* a group whose biggest top keeps less than
					     * HR_SUSPECT_KEEP_RATIO of it: the pile is its tops */
};

static void free_candidates(struct candidate *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i].tops);
	free(v);
}

static int cmp_candidates(const void *pa, const void *pb)
{
	const struct candidate *a = pa, *b = pb;

	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	return a->start < b->start ? -1 : a->start > b->start;
}

/* The root variables and the groups of shared memory that retain threshold or more. */
static int find_candidates(const struct suspect_ctx *c, uint64_t threshold,
			   struct candidate **out, size_t *n, struct hr_error *err)
{
	const struct hr_heap_dominators *hd = c->src->dominators;
	struct hr_shared_group *groups;
	size_t ngroups, cap = 0;
	struct candidate *v = NULL, *k;

	*n = 0;
	for (uint32_t r = 1; r <= hr_heap_dom_root_count(hd); r++) {
		struct hr_dom_node node = hr_heap_dom_node(hd, r);

		if (node.idom == HR_DOM_NONE || !node.retained_bytes || node.retained_bytes < threshold)
			continue;
		if (!(k = hr_array_push((void **)&v, n, &cap, sizeof(*v))))
			goto nomem;
		*k = (struct candidate){ HR_SUSPECT_ROOT, node.retained_bytes, node.retained_objects,
					 r, { r }, 1, false, NULL, 0, false };
	}
	if (hr_heap_dom_shared_groups(hd, threshold ? threshold : 1, &groups, &ngroups, err)) {
		free(v);
		return err->code;
	}
	for (size_t i = 0; i < ngroups && groups[i].bytes >= threshold && groups[i].bytes; i++) {
		struct hr_shared_group *g = &groups[i];
		bool spread = (double)hr_heap_dom_node(hd, g->biggest).retained_bytes <
			      HR_SUSPECT_KEEP_RATIO * (double)g->bytes;

		if (!(k = hr_array_push((void **)&v, n, &cap, sizeof(*v)))) {
			hr_shared_groups_free(groups, ngroups);
			goto nomem;
		}
		*k = (struct candidate){ HR_SUSPECT_SHARED, g->bytes, g->objects, g->biggest, { 0 },
					 g->nroots, g->more_roots, g->top_nodes, g->tops, spread };
		g->top_nodes = NULL; /* the candidate's now */
		memcpy(k->roots, g->roots, sizeof(k->roots));
	}
	hr_shared_groups_free(groups, ngroups);
	if (*n)
		qsort(v, *n, sizeof(*v), cmp_candidates);
	*out = v;
	return HR_OK;
nomem:
	free_candidates(v, *n);
	return hr_error_set(err, HR_ENOMEM, "out of memory for the suspects");
}

uint32_t biggest_child(const struct suspect_ctx *c, uint32_t v)
{
	uint32_t k = hr_heap_dom_inner_index(c->src->dominators, v);

	return k == HR_DOM_NONE || !c->big ? HR_DOM_NONE : c->big[k];
}

/* Whether graph node v is a heap object (not the virtual root or a root variable). */
static bool is_object(const struct suspect_ctx *c, uint32_t v)
{
	return v > hr_heap_dom_root_count(c->src->dominators) && v != HR_DOM_NONE;
}

static uint32_t object_of(const struct suspect_ctx *c, uint32_t v)
{
	return v - hr_heap_dom_root_count(c->src->dominators) - 1;
}

/*
 * Whether the dominator d of object v belongs to the same pile as v: charged to the
 * same chain (a map's header and its tables) or read as the same type (a list's nodes).
 */
static bool same_pile(const struct suspect_ctx *c, uint32_t d, uint32_t v)
{
	uint32_t od = object_of(c, d), ov = object_of(c, v);
	bool ad, av;
	uint32_t td, tv;

	if (!is_object(c, d))
		return false;
	uint32_t nd = hr_result_reached_by(c->src->result, od).node;

	if (nd != HR_CHAINS_NONE && nd == hr_result_reached_by(c->src->result, ov).node)
		return true;
	td = hr_result_type_of(c->src->result, od, &ad);
	tv = hr_result_type_of(c->src->result, ov, &av);
	return td && td == tv && ad == av;
}

/*
 * The accumulation point of what start retains: down while the biggest child keeps
 * HR_SUSPECT_KEEP_RATIO of its parent, then up while the dominator is the same pile.
 */
static uint32_t accumulation_point(const struct suspect_ctx *c, uint32_t start)
{
	const struct hr_heap_dominators *hd = c->src->dominators;
	uint32_t v = start;

	for (;;) {
		uint32_t b = biggest_child(c, v);

		if (b == HR_DOM_NONE || (double)hr_heap_dom_node(hd, b).retained_bytes <
					       HR_SUSPECT_KEEP_RATIO *
						       (double)hr_heap_dom_node(hd, v).retained_bytes)
			break;
		v = b;
	}
	/* up, never above start: a root variable is no object, start's dominator neither */
	while (v != start && same_pile(c, hr_heap_dom_idom(hd, v), v))
		v = hr_heap_dom_idom(hd, v);
	return v;
}

/* --- what the points retain, by type ----------------------------------------------------- */

struct tally_entry {
	uint64_t key;      /* label << 32 | type key; 0 empty (type keys are never 0 here) */
	uint64_t objects, bytes;
	uint64_t examples[HR_SUSPECT_EXAMPLES_MAX];
	uint8_t nexamples;
};

struct tally {
	struct tally_entry *v;
	size_t cap, used;
};

static uint64_t key_hash(uint64_t k, size_t cap)
{
	return (size_t)((k * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1);
}

static struct tally_entry *tally_slot(struct tally *t, uint64_t key)
{
	size_t i;

	if (2 * (t->used + 1) > t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 256;
		struct tally_entry *v = calloc(cap, sizeof(*v));

		if (!v)
			return NULL;
		for (size_t k = 0; k < t->cap; k++) {
			if (!t->v[k].key)
				continue;
			for (i = key_hash(t->v[k].key, cap); v[i].key; i = (i + 1) & (cap - 1))
				;
			v[i] = t->v[k];
		}
		free(t->v);
		t->v = v;
		t->cap = cap;
	}
	for (i = key_hash(key, t->cap); t->v[i].key; i = (i + 1) & (t->cap - 1))
		if (t->v[i].key == key)
			return &t->v[i];
	t->v[i].key = key;
	t->used++;
	return &t->v[i];
}

static int seed(struct seeds *s, uint32_t node, uint8_t label)
{
	uint64_t *e;

	if (node == HR_DOM_NONE)
		return HR_OK;
	if (!(e = hr_array_push((void **)&s->v, &s->n, &s->cap, sizeof(*e))))
		return HR_ENOMEM;
	*e = (uint64_t)node << 8 | label;
	return HR_OK;
}

/* Seed node's label, NO_LABEL when it is none. */
static uint8_t seed_label(const struct seeds *s, uint32_t node)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->v[mid] >> 8 < node)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->n && s->v[lo] >> 8 == node ? (uint8_t)s->v[lo] : NO_LABEL;
}

/*
 * Labels, by inner index (hr_heap_dom_inner_index()), from the seeds (sorted here) down
 * the dominator tree to the nodes without one; 1 byte an inner node.
 */
static uint8_t *inherit_labels(const struct hr_heap_dominators *hd, struct seeds *s)
{
	uint32_t count = hr_heap_dom_inner_count(hd);
	uint8_t *label = malloc((size_t)count + 1);

	if (!label || hr_sort_u64(s->v, s->n)) {
		free(label);
		return NULL;
	}
	memset(label, NO_LABEL, (size_t)count + 1);
	for (size_t i = 0; i < s->n; i++) {
		uint32_t k = hr_heap_dom_inner_index(hd, (uint32_t)(s->v[i] >> 8));

		if (k != HR_DOM_NONE)
			label[k] = (uint8_t)s->v[i];
	}
	for (uint32_t k = 1; k < count; k++) /* a node after its dominator */
		if (label[k] == NO_LABEL)
			label[k] = label[hr_heap_dom_inner_parent(hd, k)];
	return label;
}

/*
 * Node v's label from inherit_labels(): its own for an inner node; else (an object
 * without pointers) its own if it is a seed, or its dominator's.
 */
static uint8_t label_of(const struct hr_heap_dominators *hd, const uint8_t *label,
			const struct seeds *s, uint32_t v)
{
	uint32_t k = hr_heap_dom_inner_index(hd, v), d;
	uint8_t l;

	if (k != HR_DOM_NONE)
		return label[k];
	if ((l = seed_label(s, v)) != NO_LABEL)
		return l;
	d = hr_heap_dom_idom(hd, v);
	return d == HR_DOM_NONE ? NO_LABEL : label[hr_heap_dom_inner_index(hd, d)];
}

/* The objects of nodes [from, to) counted into t by their labels (inherit_labels()). */
struct tally_part {
	const struct suspect_ctx *c;
	const uint8_t *label;
	const struct seeds *s;
	uint32_t from, to;
	struct tally t;
	int rc;
};

static void *tally_part(void *arg)
{
	struct tally_part *p = arg;
	const struct hr_heap_dominators *hd = p->c->src->dominators;

	for (uint32_t v = p->from; v < p->to; v++) {
		uint8_t l = label_of(hd, p->label, p->s, v);
		struct tally_entry *e;
		struct hr_object o;

		if (l == NO_LABEL)
			continue;
		e = tally_slot(&p->t, (uint64_t)l << 32 | object_type_key(p->c, object_of(p->c, v)));
		if (!e) {
			p->rc = HR_ENOMEM;
			break;
		}
		o = hr_dump_object(p->c->src->model, object_of(p->c, v));
		e->objects++;
		e->bytes += o.size;
		if (e->nexamples < HR_SUSPECT_EXAMPLES_MAX)
			e->examples[e->nexamples++] = o.addr;
	}
	return NULL;
}

/* The counts of `later` (nodes after all of t's) added to t's, examples after t's. */
static int tally_merge(struct tally *t, const struct tally *later)
{
	for (size_t k = 0; k < later->cap; k++) {
		const struct tally_entry *from = &later->v[k];
		struct tally_entry *e;

		if (!from->key)
			continue;
		if (!(e = tally_slot(t, from->key)))
			return HR_ENOMEM;
		e->objects += from->objects;
		e->bytes += from->bytes;
		for (uint8_t i = 0; i < from->nexamples && e->nexamples < HR_SUSPECT_EXAMPLES_MAX; i++)
			e->examples[e->nexamples++] = from->examples[i];
	}
	return HR_OK;
}

/*
 * The tally of every node, on two threads when the caller allows it (each node's count
 * is independent of the others': a half each, the second half's merged after the
 * first's, so that the examples are the first ones by node as on one thread). On the 4
 * GiB generated heap this loop is a third of the search after the scan.
 */
static int tally_nodes(const struct suspect_ctx *c, const uint8_t *label,
		       const struct seeds *s, struct tally *t)
{
	const struct hr_heap_dominators *hd = c->src->dominators;
	uint32_t first = hr_heap_dom_root_count(hd) + 1, end = hr_heap_dom_count(hd);
	struct tally_part part[2] = { { c, label, s, first, end, *t, HR_OK } };
	pthread_t thread;
	bool two = c->src->threads > 1 && end > first && end - first >= TALLY_SPLIT_MIN;
	int rc;

	if (two) {
		part[0].to = first + (end - first) / 2;
		part[1] = (struct tally_part){ c, label, s, part[0].to, end, { 0 }, HR_OK };
		two = !pthread_create(&thread, NULL, tally_part, &part[1]);
		if (!two)
			part[0].to = end; /* all on this thread */
	}
	tally_part(&part[0]);
	if (two)
		pthread_join(thread, NULL);
	*t = part[0].t;
	rc = part[0].rc ? part[0].rc : part[1].rc;
	if (!rc && two)
		rc = tally_merge(t, &part[1].t);
	free(part[1].t.v);
	return rc;
}

/*
 * Labels every object with the suspect whose point dominates it (a spread group's: one
 * of its tops), and counts by type.
 */
static int tally_types(const struct suspect_ctx *c, const struct candidate *cand,
		       const uint32_t *points, size_t npoints, struct tally *t)
{
	const struct hr_heap_dominators *hd = c->src->dominators;
	struct seeds s = { 0 };
	uint8_t *label = NULL;
	int rc = HR_ENOMEM;

	for (size_t i = 0; i < npoints; i++)
		for (uint32_t k = 0; k < (cand[i].spread ? cand[i].ntops : 1); k++)
			if (seed(&s, cand[i].spread ? cand[i].tops[k] : points[i], (uint8_t)i))
				goto out;
	if ((label = inherit_labels(hd, &s)))
		rc = tally_nodes(c, label, &s, t);
out:
	free(label);
	free(s.v);
	return rc;
}

static int cmp_entries(const void *pa, const void *pb)
{
	const struct tally_entry *a = pa, *b = pb;

	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	return a->key < b->key ? -1 : a->key > b->key;
}

/* Suspect i's rows of the tally, biggest first, with the examples of the biggest. */
static int take_types(const struct suspect_ctx *c, const struct tally *t, uint8_t i,
		      struct hr_suspect *s)
{
	struct tally_entry *mine = NULL;
	size_t n = 0, cap = 0;

	for (size_t k = 0; k < t->cap; k++) {
		struct tally_entry *e;

		if (!t->v[k].key || (uint8_t)(t->v[k].key >> 32) != i)
			continue;
		if (!(e = hr_array_push((void **)&mine, &n, &cap, sizeof(*e)))) {
			free(mine);
			return HR_ENOMEM;
		}
		*e = t->v[k];
	}
	if (n)
		qsort(mine, n, sizeof(*mine), cmp_entries);
	for (size_t k = 0; k < n; k++) {
		if (s->ntypes == HR_SUSPECT_TYPES_MAX) {
			s->other_type_objects += mine[k].objects;
			s->other_type_bytes += mine[k].bytes;
			continue;
		}
		s->types[s->ntypes] = (struct hr_suspect_type){
			type_key_name(c, (uint32_t)mine[k].key), mine[k].objects, mine[k].bytes };
		if (!s->types[s->ntypes++].type) {
			free(mine);
			return HR_ENOMEM;
		}
	}
	if (n) {
		s->nexamples = mine[0].nexamples;
		memcpy(s->examples, mine[0].examples, sizeof(s->examples));
	}
	free(mine);
	return HR_OK;
}

/* --- the suspects -------------------------------------------------------------------------- */

/* Who holds it: the root variable's name, or the names of the roots sharing it. */
static int name_holders(const struct suspect_ctx *c, const struct candidate *k,
			struct hr_suspect *s)
{
	const struct hr_heap_dominators *hd = c->src->dominators;

	if (!(s->roots = calloc(k->nroots + 1, sizeof(*s->roots))))
		return HR_ENOMEM;
	for (uint8_t r = 0; r < k->nroots; r++) {
		uint32_t chain = hr_heap_graph_root_chain(hr_heap_dom_graph(hd), k->roots[r]);

		if (!(s->roots[s->nroots++] = strdup(root_name(c, chain))))
			return HR_ENOMEM;
	}
	s->more_roots = k->more_roots;
	s->chain = k->kind == HR_SUSPECT_ROOT
			   ? hr_heap_graph_root_chain(hr_heap_dom_graph(hd), k->start)
			   : HR_CHAINS_NONE;
	return HR_OK;
}

/* Whether graph node v lies in what the root being searched from dominates. */
static bool in_region(void *ctx, uint32_t v)
{
	const struct suspect_ctx *c = ctx;

	return label_of(c->src->dominators, c->region, &c->region_starts, v) == c->searching;
}

/*
 * Each node's root candidate (the root variable over the threshold that dominates it),
 * in one pass in preorder (a node after its dominator): the search of a root's path
 * stays in it, as every path from a root variable to what it dominates does (its only
 * predecessor is the virtual root).
 */
static int mark_regions(struct suspect_ctx *c, const struct candidate *cand, size_t ncand)
{
	for (size_t i = 0; i < ncand; i++)
		if (cand[i].kind == HR_SUSPECT_ROOT && seed(&c->region_starts, cand[i].start, (uint8_t)i))
			return HR_ENOMEM;
	c->region = inherit_labels(c->src->dominators, &c->region_starts);
	return c->region ? HR_OK : HR_ENOMEM;
}

/* Whether graph node v is an object charged to one of the chains in c->along. */
static bool along_chain(void *ctx, uint32_t v)
{
	const struct suspect_ctx *c = ctx;
	uint32_t node;

	if (!is_object(c, v))
		return false;
	node = hr_result_reached_by(c->src->result, object_of(c, v)).node;
	return node < hr_chains_count(c->src->tree) && hr_bit_get(c->along, node);
}

/*
 * For a shared suspect: c->along set to the point's chain and the chains above it, and
 * the root variable that chain starts at moved first among the candidate's roots (the
 * others keep their order); nothing when the point has no chain or its root is not named.
 */
static int follow_point_chain(struct suspect_ctx *c, struct candidate *k, uint32_t point)
{
	const struct hr_chains *tree = c->src->tree;
	uint32_t chain, top, r;
	uint8_t i = 0;

	if (!is_object(c, point))
		return HR_OK;
	chain = hr_result_reached_by(c->src->result, object_of(c, point)).node;
	if (chain >= hr_chains_count(tree))
		return HR_OK;
	for (top = chain; hr_chains_node(tree, top)->parent != HR_CHAINS_TOP;)
		top = hr_chains_node(tree, top)->parent;
	r = hr_heap_graph_root_node(hr_heap_dom_graph(c->src->dominators), top);
	while (i < k->nroots && k->roots[i] != r)
		i++;
	if (!r || i == k->nroots)
		return HR_OK;
	memmove(&k->roots[1], &k->roots[0], i * sizeof(k->roots[0]));
	k->roots[0] = r;
	if (!(c->along = calloc(hr_bit_words(hr_chains_count(tree)) + 1, sizeof(*c->along))))
		return HR_ENOMEM;
	for (uint32_t n = chain; n != HR_CHAINS_TOP; n = hr_chains_node(tree, n)->parent)
		hr_bit_set(c->along, n);
	return HR_OK;
}

/*
 * The path from the (first) root to the point, each hop named; *prev: the point's
 * predecessor on it (HR_DOM_NONE: none). A root's search stays in what it dominates. A
 * shared suspect's first keeps to the chains the scan reached the point along
 * (follow_point_chain()): the whole of what its root reaches was 10 million objects of a
 * search on small-1g. It searches all of it only if that finds no path.
 */
static int find_path(struct suspect_ctx *c, const struct candidate *k, uint32_t point,
		     struct hr_suspect *s, uint32_t *prev, struct hr_error *err)
{
	struct hr_heap_graph *g = hr_heap_dom_graph(c->src->dominators);
	uint32_t *nodes;
	size_t n;
	bool mine = k->kind == HR_SUSPECT_ROOT && c->region;
	int rc;

	c->searching = mine ? label_of(c->src->dominators, c->region, &c->region_starts, k->start)
			    : NO_LABEL;
	rc = hr_heap_graph_path_from(g, k->roots[0], point,
				     mine ? in_region : c->along ? along_chain : NULL, c, &nodes, &n,
				     err);
	if (rc == 1 && c->along)
		rc = hr_heap_graph_path_from(g, k->roots[0], point, NULL, c, &nodes, &n, err);
	if (rc == 1)
		return HR_OK; /* (cannot happen: the point is dominated by what the root reaches) */
	if (rc)
		return rc;
	if (!(s->path = calloc(n + 1, sizeof(*s->path)))) {
		free(nodes);
		return hr_error_set(err, HR_ENOMEM, "out of memory for a suspect's path");
	}
	for (size_t i = 0; i < n; i++) {
		struct hr_suspect_hop *h = &s->path[s->npath++];

		if (describe_hop(c, i ? nodes[i - 1] : HR_DOM_NONE, nodes[i], h)) {
			free(nodes);
			return hr_error_set(err, HR_ENOMEM, "out of memory for a suspect's path");
		}
	}
	*prev = n >= 2 ? nodes[n - 2] : HR_DOM_NONE;
	free(nodes);
	return HR_OK;
}

/* The first heap object root variable chain's words lead to, or UINT32_MAX. */
static uint32_t first_object_of_root(const struct suspect_ctx *c, uint32_t chain)
{
	size_t n;
	const struct hr_root_edge *e = hr_result_root_edges(c->src->result, &n);

	for (size_t i = 0; i < n; i++)
		if (e[i].node == chain)
			return e[i].obj;
	return UINT32_MAX;
}

/* A frame variable's goroutine: the one whose frame points at the root's first object. */
static int find_goroutine(const struct suspect_ctx *c, struct hr_suspect *s)
{
	size_t ng;
	const struct hr_goroutine *g = hr_dump_goroutines(c->src->model, &ng);
	uint32_t obj;
	int64_t i, fn;

	if (s->kind != HR_SUSPECT_ROOT)
		return HR_OK;
	obj = s->npath >= 2 ? (uint32_t)hr_dump_object_at(c->src->model, s->path[1].addr)
			    : first_object_of_root(c, s->chain);
	if (obj == UINT32_MAX || (i = hr_dump_frame_goroutine(c->src->model, s->roots[0], obj)) < 0 ||
	    (size_t)i >= ng)
		return HR_OK;
	s->goid = g[i].goid;
	fn = c->src->img ? hr_image_func_at(c->src->img, g[i].gopc) : -1;
	s->creator = strdup(fn >= 0 ? hr_binary_func(c->src->img->bin, (size_t)fn)->name : "?");
	s->goroutines = count_frame_goroutines(c, s->roots[0], &s->leaked);
	return s->creator ? HR_OK : HR_ENOMEM;
}

static int make_suspect(struct suspect_ctx *c, const struct candidate *cand, uint32_t point,
			struct hr_suspect *s, struct hr_error *err)
{
	uint32_t prev = HR_DOM_NONE;
	struct candidate own = *cand, *k = &own; /* a shared one's roots may be reordered */
	int rc;

	*s = (struct hr_suspect){ .kind = k->kind, .bytes = k->bytes, .objects = k->objects };
	if (k->kind == HR_SUSPECT_SHARED && follow_point_chain(c, k, point))
		return hr_error_set(err, HR_ENOMEM, "out of memory for a suspect's path");
	rc = find_path(c, k, point, s, &prev, err);
	free(c->along);
	c->along = NULL;
	if (rc)
		return err->code;
	if (name_holders(c, k, s) ||
	    (k->spread ? describe_shared_tops(c, k->tops, k->ntops, point, s)
		       : describe_point(c, point, prev, s)))
		return hr_error_set(err, HR_ENOMEM, "out of memory for the suspects");
	if (find_goroutine(c, s))
		return hr_error_set(err, HR_ENOMEM, "out of memory for the suspects");
	return HR_OK;
}

static int cmp_suspects(const void *pa, const void *pb)
{
	const struct hr_suspect *a = pa, *b = pb;

	int by_name;

	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	if (a->kind != b->kind)
		return (int)a->kind - (int)b->kind;
	by_name = strcmp(a->nroots ? a->roots[0] : "", b->nroots ? b->roots[0] : "");
	return by_name ? by_name : (a->point.addr > b->point.addr) - (a->point.addr < b->point.addr);
}

static struct hr_suspects *find_all(struct suspect_ctx *c, struct hr_suspects *out,
				    struct hr_error *err)
{
	struct candidate *cand = NULL;
	uint32_t points[HR_SUSPECTS_MAX];
	struct tally t = { 0 };
	size_t ncand = 0, ncand_all = 0;

	if (find_candidates(c, out->threshold_bytes, &cand, &ncand, err))
		goto fail;
	ncand_all = ncand;
	if (ncand > HR_SUSPECTS_MAX) {
		out->below_threshold = ncand - HR_SUSPECTS_MAX;
		ncand = HR_SUSPECTS_MAX;
	}
	if (ncand && !(c->big = hr_heap_dom_biggest_children(c->src->dominators)))
		goto nomem;
	for (size_t i = 0; i < ncand; i++) /* a spread group's path goes to its biggest top */
		points[i] = cand[i].spread ? cand[i].start : accumulation_point(c, cand[i].start);
	if (!(out->v = calloc(ncand + 1, sizeof(*out->v))) || (ncand && mark_regions(c, cand, ncand)))
		goto nomem;
	for (size_t i = 0; i < ncand; i++) {
		out->n++;
		if (make_suspect(c, &cand[i], points[i], &out->v[i], err))
			goto fail;
	}
	free(c->region); /* 1 byte an inner node, back before the tally makes its own */
	c->region = NULL;
	if (tally_types(c, cand, points, ncand, &t))
		goto nomem;
	for (size_t i = 0; i < ncand; i++)
		if (take_types(c, &t, (uint8_t)i, &out->v[i]))
			goto nomem;
	if (find_leaked_groups(c, out->threshold_bytes, &out->v, &out->n, err))
		goto fail;
	qsort(out->v, out->n, sizeof(*out->v), cmp_suspects);
	free(t.v);
	free_candidates(cand, ncand_all);
	free(c->big);
	free(c->region_starts.v);
	return out;
nomem:
	hr_error_set(err, HR_ENOMEM, "out of memory for the suspects");
fail:
	free(t.v);
	free_candidates(cand, ncand_all);
	free(c->big);
	free(c->region);
	free(c->region_starts.v);
	hr_suspects_free(out);
	return NULL;
}

/* The roots that grew most since the baseline: at most HR_GROWTH_MAX, biggest first. */
static int find_growth(const struct hr_suspect_sources *src, struct hr_suspects *out,
		       struct hr_error *err)
{
	if (hr_chains_growth(src->baseline, src->tree, HR_SUSPECT_KEEP_RATIO, &out->growth,
			     &out->ngrowth))
		return hr_error_set(err, HR_ENOMEM, "out of memory for the growth since the baseline");
	while (out->ngrowth > HR_GROWTH_MAX) {
		out->ngrowth--;
		free(out->growth[out->ngrowth].root);
		free(out->growth[out->ngrowth].chain);
	}
	return HR_OK;
}

struct hr_suspects *hr_suspects_find(const struct hr_suspect_sources *src,
				     double threshold_percent, struct hr_error *err)
{
	struct hr_suspects *out = calloc(1, sizeof(*out));
	struct hr_dom_node all = hr_heap_dom_node(src->dominators, 0);
	struct suspect_ctx c = { .src = src };

	if (!out) {
		hr_error_set(err, HR_ENOMEM, "out of memory for the suspects");
		return NULL;
	}
	out->reachable_bytes = all.retained_bytes;
	out->reachable_objects = all.retained_objects;
	out->threshold_percent = threshold_percent;
	out->has_baseline = src->baseline != NULL;
	if (src->baseline && find_growth(src, out, err)) {
		hr_suspects_free(out);
		return NULL;
	}
	out->threshold_bytes = (uint64_t)((double)all.retained_bytes * threshold_percent / 100.0);
	if ((double)out->threshold_bytes * 100.0 < (double)all.retained_bytes * threshold_percent)
		out->threshold_bytes++; /* at least the share: rounded up */
	return find_all(&c, out, err);
}

static void free_suspect(struct hr_suspect *s)
{
	for (size_t i = 0; i < s->nroots; i++)
		free(s->roots[i]);
	free(s->roots);
	free(s->creator);
	free(s->point.what);
	free(s->point.type);
	free(s->point.chain);
	for (size_t i = 0; i < s->npath; i++) {
		free(s->path[i].field);
		free(s->path[i].type);
	}
	free(s->path);
	for (size_t i = 0; i < s->ntypes; i++)
		free(s->types[i].type);
}

void hr_suspects_free(struct hr_suspects *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		free_suspect(&s->v[i]);
	free(s->v);
	hr_chain_growth_free(s->growth, s->ngrowth);
	free(s);
}
