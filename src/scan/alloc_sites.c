/*
 * alloc_sites.c - the chain tree with allocation sites (analyze --by-alloc, see scan.h):
 * under each chain, the objects the memory profile sampled go below the frames of the
 * stack that allocated them, from the allocating function out to its callers.
 */
#include <stdlib.h>
#include <string.h>

#include "scan_internal.h"

#define FRAME_PREFIX "@ "

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
static uint32_t *sampled_buckets(const struct hr_scan *s)
{
	size_t nb, ns;
	const struct hr_memprof_bucket *b = hr_dump_memprof_buckets(s->dump, &nb);
	const struct hr_alloc_sample *smp = hr_dump_alloc_samples(s->dump, &ns);
	struct bucket_ref *refs = malloc((nb + 1) * sizeof(*refs));
	uint32_t *of = malloc((s->nobj + 1) * sizeof(*of));

	if (!refs || !of) {
		free(refs);
		free(of);
		return NULL;
	}
	for (size_t i = 0; i < nb; i++)
		refs[i] = (struct bucket_ref){ b[i].id, (uint32_t)i };
	qsort(refs, nb, sizeof(*refs), cmp_bucket_ref);
	for (size_t i = 0; i < s->nobj; i++)
		of[i] = UINT32_MAX;
	for (size_t i = 0; i < ns; i++) {
		struct bucket_ref key = { smp[i].bucket_id, 0 }, *hit;
		int64_t obj = hr_dump_object_at(s->dump, smp[i].addr);

		hit = bsearch(&key, refs, nb, sizeof(*refs), cmp_bucket_ref);
		if (obj >= 0 && hit)
			of[obj] = hit->index;
	}
	free(refs);
	return of;
}

/* The runtime's own frames at the top of a stack, and goexit at its bottom, as pprof hides them. */
static bool runtime_frame(const struct hr_memprof_frame *f)
{
	return (f->func.len >= 8 && !memcmp(f->func.ptr, "runtime.", 8)) ||
	       (f->func.len >= 17 && !memcmp(f->func.ptr, "internal/runtime/", 17));
}

/* Below node, one child per frame of bucket b, the allocating function first. */
static uint32_t frames_below(struct hr_chains *to, uint32_t node, const struct hr_dump *d,
			     const struct hr_memprof_bucket *b, char *name, size_t cap)
{
	size_t nf;
	const struct hr_memprof_frame *f = hr_dump_memprof_frames(d, &nf) + b->first_frame;
	uint32_t skip = 0, n = b->frame_count;

	while (skip < n && runtime_frame(&f[skip]))
		skip++;
	if (skip == n)
		skip = 0;
	if (n - skip > 1 && f[n - 1].func.len == 14 && !memcmp(f[n - 1].func.ptr, "runtime.goexit", 14))
		n--;
	for (uint32_t k = skip; k < n && node != HR_CHAINS_NONE; k++) {
		size_t len = f[k].func.len < cap - sizeof(FRAME_PREFIX) ? f[k].func.len
									 : cap - sizeof(FRAME_PREFIX);

		memcpy(name, FRAME_PREFIX, sizeof(FRAME_PREFIX) - 1);
		memcpy(name + sizeof(FRAME_PREFIX) - 1, f[k].func.ptr, len);
		node = hr_chains_child(to, node, name, sizeof(FRAME_PREFIX) - 1 + len);
	}
	return node;
}

/* Copies every node of from into to (parents have lower ids than their children). */
static bool copy_nodes(const struct hr_chains *from, struct hr_chains *to, uint32_t *map)
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

struct hr_chains *hr_scan_chains_by_alloc(const struct hr_scan *s, const struct hr_chains *from,
					  uint32_t max_depth, bool fold_recursion,
					  struct hr_error *err)
{
	size_t nb, nnodes = hr_chains_count(from);
	const struct hr_memprof_bucket *b = hr_dump_memprof_buckets(s->dump, &nb);
	struct hr_chains *to = hr_chains_new(max_depth);
	uint32_t *bucket_of = s->paths ? sampled_buckets(s) : NULL;
	uint32_t *map = malloc((nnodes + 1) * sizeof(*map));
	char name[512];

	if (!to || !bucket_of || !map)
		goto fail;
	if (fold_recursion)
		hr_chains_fold_recursion(to);
	if (!copy_nodes(from, to, map))
		goto fail;
	for (size_t i = 0; i < s->nobj; i++) {
		uint32_t node = s->paths[i].node;
		struct hr_object o;

		if (node == HR_CHAINS_NONE || node == HR_CHAINS_TOP || node >= nnodes)
			continue;
		node = map[node];
		if (bucket_of[i] != UINT32_MAX)
			node = frames_below(to, node, s->dump, &b[bucket_of[i]], name, sizeof(name));
		if (node == HR_CHAINS_NONE)
			goto fail;
		o = hr_dump_object(s->dump, i);
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
