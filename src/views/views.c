/* SPDX-License-Identifier: Apache-2.0 */
/*
 * views.c - other chain trees from the scan's tree and its result, object by object
 * (views.h):
 *   - by allocation site (analyze --by-alloc): under each chain, the objects the memory
 *     profile sampled go below the frames of the stack that allocated them, from the
 *     allocating function out to its callers;
 *   - by type (analyze --by-type): under each chain, its objects by the type the typed
 *     walk read them as; or the types first, the chains holding each below it;
 *   - by dominator (analyze --attribution dominator): by_dominator.c;
 * and the examples of each chain (analyze --examples).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heapref/model.h"
#include "views_internal.h"

#define FRAME_PREFIX "@ "
#define INLINE_SUFFIX " (inline)" /* as pprof marks a function inlined into its caller */

struct bucket_ref {
	uint64_t id;
	uint32_t index;
};

static int cmp_bucket_ref(const void *pa, const void *pb)
{
	const struct bucket_ref *a = pa, *b = pb;

	return a->id < b->id ? -1 : a->id > b->id;
}

/* Per heap object, the index of the bucket that sampled it, UINT32_MAX if none. */
static uint32_t *sampled_buckets(const struct hr_dump *model)
{
	size_t nb, ns, nobj = hr_dump_object_count(model);
	const struct hr_memprof_bucket *b = hr_dump_memprof_buckets(model, &nb);
	const struct hr_alloc_sample *smp = hr_dump_alloc_samples(model, &ns);
	struct bucket_ref *refs = malloc((nb + 1) * sizeof(*refs));
	uint32_t *of = malloc((nobj + 1) * sizeof(*of));

	if (!refs || !of) {
		free(refs);
		free(of);
		return NULL;
	}
	for (size_t i = 0; i < nb; i++)
		refs[i] = (struct bucket_ref){ b[i].id, (uint32_t)i };
	qsort(refs, nb, sizeof(*refs), cmp_bucket_ref);
	for (size_t i = 0; i < nobj; i++)
		of[i] = UINT32_MAX;
	for (size_t i = 0; i < ns; i++) {
		struct bucket_ref key = { smp[i].bucket_id, 0 }, *hit;
		int64_t obj = hr_dump_object_at(model, smp[i].addr);

		hit = bsearch(&key, refs, nb, sizeof(*refs), cmp_bucket_ref);
		if (obj >= 0 && hit)
			of[obj] = hit->index;
	}
	free(refs);
	return of;
}

/* Below node, one child per frame of bucket b, the allocating function first. */
static uint32_t frames_below(struct hr_chains *to, uint32_t node, const struct hr_dump *d,
			     const struct hr_memprof_bucket *b, char *name, size_t cap)
{
	size_t nf;
	const struct hr_memprof_frame *f = hr_dump_memprof_frames(d, &nf);
	uint32_t first, n;

	hr_dump_memprof_shown(d, b, &first, &n);
	for (uint32_t k = first; k < first + n && node != HR_CHAINS_NONE; k++) {
		int len = snprintf(name, cap, FRAME_PREFIX "%.*s%s",
				   (int)(f[k].func.len < cap ? f[k].func.len : cap),
				   (const char *)f[k].func.ptr, f[k].inlined ? INLINE_SUFFIX : "");

		if (len < 0)
			len = 0;
		node = hr_chains_child(to, node, name, (size_t)len < cap ? (size_t)len : cap - 1);
	}
	return node;
}

/* Copies every node of from into to (parents have lower ids than their children). */
bool view_copy_nodes(const struct hr_chains *from, struct hr_chains *to, uint32_t *map)
{
	map[HR_CHAINS_TOP] = HR_CHAINS_TOP;
	for (uint32_t id = 1; id < hr_chains_count(from); id++) {
		const struct hr_chain_node *n = hr_chains_node(from, id);
		const char *name = hr_chains_name(from, n->name);

		map[id] = hr_chains_child(to, map[n->parent], name, strlen(name));
		if (map[id] == HR_CHAINS_NONE)
			return false;
	}
	return true;
}

static struct hr_chains *by_alloc(const struct hr_chains *from, const struct hr_view_sources *src,
				  uint32_t max_depth, bool fold_recursion, struct hr_error *err)
{
	const struct hr_dump *model = src->model;
	const struct hr_scan_result *r = src->result;
	size_t nb, nnodes = hr_chains_count(from), nobj = hr_result_object_count(r);
	const struct hr_memprof_bucket *b = hr_dump_memprof_buckets(model, &nb);
	struct hr_chains *to = hr_chains_new(max_depth);
	uint32_t *bucket_of = hr_result_has_paths(r) ? sampled_buckets(model) : NULL;
	uint32_t *map = malloc((nnodes + 1) * sizeof(*map));
	char name[512];

	if (!to || !bucket_of || !map)
		goto fail;
	if (fold_recursion)
		hr_chains_fold_recursion(to);
	if (!view_copy_nodes(from, to, map))
		goto fail;
	for (size_t i = 0; i < nobj; i++) {
		uint32_t node = hr_result_reached_by(r, (uint32_t)i).node;
		struct hr_object o;

		if (node == HR_CHAINS_NONE || node == HR_CHAINS_TOP || node >= nnodes)
			continue;
		node = map[node];
		if (bucket_of[i] != UINT32_MAX)
			node = frames_below(to, node, model, &b[bucket_of[i]], name, sizeof(name));
		if (node == HR_CHAINS_NONE)
			goto fail;
		o = hr_dump_object(model, i);
		hr_chains_charge(to, node, 1, o.size);
	}
	free(bucket_of);
	free(map);
	return to;
fail:
	hr_error_set(err, HR_ENOMEM, "out of memory for the chains by allocation site");
	free(bucket_of);
	free(map);
	hr_chains_free(to);
	return NULL;
}

/* --- the type axis ------------------------------------------------------------------------ */

/*
 * "type main.Item", "type []uint8" (an array of it), "type ?": the leaf name of object i.
 * An object the typed walk did not read has the type the dump's records give it, if any
 * (go1.3 and go1.4 dumps).
 */
static size_t type_leaf(const struct hr_view_sources *src, uint32_t i, char *buf, size_t cap)
{
	bool array;
	uint32_t t = hr_result_type_of(src->result, i, &array);
	struct hr_object_type rt;
	const char *name;
	int n;

	int64_t fn = t ? -1 : hr_result_closure_of(src->result, i);

	if (fn >= 0)
		n = snprintf(buf, cap, "type closure %s", hr_binary_func(src->bin, (size_t)fn)->name);
	else if (!t && hr_result_is_string_data(src->result, i))
		n = snprintf(buf, cap, "type string data");
	else if (!t && hr_dump_object_type(src->model, i, &rt))
		n = snprintf(buf, cap, "type %s%.*s", rt.prefix,
			     (int)(rt.name.len < 400 ? rt.name.len : 400), (const char *)rt.name.ptr);
	else {
		name = !t ? "?" : hr_binary_type(src->bin, t)->name;
		n = snprintf(buf, cap, "type %s%s", array ? "[]" : "", name[0] ? name : "(unnamed)");
	}
	return n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
}

/*
 * node's chain of from again below top in to, root first, made as needed: the chains
 * under a type in the transposed tree.
 */
static uint32_t chain_below(const struct hr_chains *from, struct hr_chains *to, uint32_t top,
			    uint32_t node, uint32_t *path, size_t cap)
{
	size_t n = 0;

	for (uint32_t a = node; a != HR_CHAINS_TOP && n < cap; a = hr_chains_node(from, a)->parent)
		path[n++] = a;
	while (n > 0 && top != HR_CHAINS_NONE) {
		const char *name = hr_chains_name(from, hr_chains_node(from, path[--n])->name);

		top = hr_chains_child(to, top, name, strlen(name));
	}
	return top;
}

static struct hr_chains *by_type(const struct hr_chains *from, const struct hr_view_sources *src,
				 bool types_first, uint32_t max_depth, bool fold_recursion,
				 struct hr_error *err)
{
	const struct hr_scan_result *r = src->result;
	size_t nnodes = hr_chains_count(from), nobj = hr_result_object_count(r);
	struct hr_chains *to = hr_chains_new(max_depth);
	uint32_t *map = malloc((nnodes + 1) * sizeof(*map));
	uint32_t *path = malloc((nnodes + 1) * sizeof(*path));
	char name[512];

	if (!to || !map || !path || !hr_result_has_paths(r))
		goto fail;
	if (fold_recursion)
		hr_chains_fold_recursion(to);
	if (!types_first && !view_copy_nodes(from, to, map))
		goto fail;
	for (uint32_t i = 0; i < nobj; i++) {
		uint32_t node = hr_result_reached_by(r, i).node;
		size_t len;

		if (node == HR_CHAINS_NONE || node == HR_CHAINS_TOP || node >= nnodes)
			continue;
		len = type_leaf(src, i, name, sizeof(name));
		if (types_first)
			node = chain_below(from, to, hr_chains_child(to, HR_CHAINS_TOP, name, len), node,
					   path, nnodes);
		else
			node = hr_chains_child(to, map[node], name, len);
		if (node == HR_CHAINS_NONE)
			goto fail;
		hr_chains_charge(to, node, 1, hr_dump_object(src->model, i).size);
	}
	free(map);
	free(path);
	return to;
fail:
	hr_error_set(err, HR_ENOMEM, "out of memory for the chains by type");
	free(map);
	free(path);
	hr_chains_free(to);
	return NULL;
}

/* --- the entry points ----------------------------------------------------------------- */

struct hr_chains *hr_view_chains(enum hr_view view, const struct hr_chains *tree,
				 const struct hr_view_sources *src, uint32_t max_depth,
				 bool fold_recursion, struct hr_error *err)
{
	switch (view) {
	case HR_VIEW_BY_ALLOC:
		return by_alloc(tree, src, max_depth, fold_recursion, err);
	case HR_VIEW_BY_TYPE:
		return by_type(tree, src, false, max_depth, fold_recursion, err);
	case HR_VIEW_TYPES_FIRST:
		return by_type(tree, src, true, max_depth, fold_recursion, err);
	case HR_VIEW_BY_DOMINATOR:
		return view_by_dominator(tree, src, max_depth, fold_recursion, err);
	}
	hr_error_set(err, HR_EUSAGE, "no view %d", (int)view);
	return NULL;
}

int hr_view_offer_examples(struct hr_chains *tree, const struct hr_view_sources *src,
			   struct hr_error *err)
{
	size_t nobj = hr_result_object_count(src->result);

	for (size_t i = 0; hr_result_has_paths(src->result) && i < nobj; i++) {
		uint32_t node = hr_result_reached_by(src->result, (uint32_t)i).node;
		struct hr_object o;

		if (node == HR_CHAINS_NONE)
			continue;
		o = hr_dump_object(src->model, i);
		if (hr_chains_offer_example(tree, node, o.addr, o.size))
			return hr_error_set(err, HR_ENOMEM, "out of memory for the examples");
	}
	return HR_OK;
}
