/* SPDX-License-Identifier: Apache-2.0 */
/*
 * result.c - what a scan found, moved out of the scan once its passes are done
 * (result.h): the later stages read this, and the scan can be freed before they run.
 */
#include <stdlib.h>
#include <string.h>

#include "scan_internal.h"

struct hr_scan_result {
	struct hr_scan_summary sum;
	size_t nobj;
	uint32_t *path_node, *path_holder;  /* per object, or NULL (struct scan_paths) */
	uint32_t *obj_type;                 /* per object: OBJ_TYPE_* or a type id, or NULL */
	struct hr_root_edge *root_edges;
	size_t nroot_edges;
	struct hr_goroutine_share *shares;  /* sorted by node, then goroutine */
	size_t nshares;
};

static int cmp_share(const void *pa, const void *pb)
{
	const struct hr_goroutine_share *a = pa, *b = pb;

	if (a->node != b->node)
		return a->node < b->node ? -1 : 1;
	return a->goroutine < b->goroutine ? -1 : a->goroutine > b->goroutine;
}

/* The shares of the map in an array, sorted; 0 or HR_ENOMEM. */
static int sorted_shares(const struct share_map *map, struct hr_scan_result *r)
{
	size_t m = 0;

	if (!map->n)
		return HR_OK;
	if (!(r->shares = malloc(map->n * sizeof(*r->shares))))
		return HR_ENOMEM;
	for (size_t i = 0; i < map->cap; i++)
		if (map->slots[i].goroutine)
			r->shares[m++] = map->slots[i];
	qsort(r->shares, m, sizeof(*r->shares), cmp_share);
	r->nshares = m;
	return HR_OK;
}

struct hr_scan_result *hr_scan_take_result(struct hr_scan *s, struct hr_error *err)
{
	struct scan_results *res = &s->res;
	struct hr_scan_result *r = calloc(1, sizeof(*r));

	if (!r || sorted_shares(&res->shares, r)) {
		free(r);
		hr_error_set(err, HR_ENOMEM, "out of memory for the scan's result");
		return NULL;
	}
	r->sum = res->sum;
	r->nobj = s->ctx.nobj;
	r->path_node = res->paths.node;
	r->path_holder = res->paths.holder;
	r->obj_type = res->obj_type;
	r->root_edges = res->root_edges;
	r->nroot_edges = res->nroot_edges;
	res->paths = (struct scan_paths){ 0 }; /* the result's now: the scan frees the rest */
	res->obj_type = NULL;
	res->root_edges = NULL;
	res->nroot_edges = res->root_edges_cap = 0;
	return r;
}

void hr_result_free(struct hr_scan_result *r)
{
	if (!r)
		return;
	free(r->path_node);
	free(r->path_holder);
	free(r->obj_type);
	free(r->root_edges);
	free(r->shares);
	free(r);
}

const struct hr_scan_summary *hr_result_summary(const struct hr_scan_result *r)
{
	return &r->sum;
}

size_t hr_result_object_count(const struct hr_scan_result *r)
{
	return r->nobj;
}

bool hr_result_has_paths(const struct hr_scan_result *r)
{
	return r->path_node != NULL;
}

struct hr_reached_by hr_result_reached_by(const struct hr_scan_result *r, uint32_t obj)
{
	struct hr_reached_by by = { HR_CHAINS_NONE, HR_SCAN_NOT_REACHED };

	if (!r->path_node || obj >= r->nobj)
		return by;
	by.node = r->path_node[obj];
	if (r->path_holder)
		by.holder = r->path_holder[obj];
	else if (by.node != HR_CHAINS_NONE)
		by.holder = HR_SCAN_HOLDER_UNKNOWN;
	return by;
}

uint32_t hr_result_type_of(const struct hr_scan_result *r, uint32_t obj, bool *array)
{
	uint32_t t = r->obj_type && obj < r->nobj ? r->obj_type[obj] : OBJ_TYPE_UNKNOWN;

	*array = (t & OBJ_TYPE_ARRAY) != 0;
	return t & OBJ_TYPE_CLOSURE || t == OBJ_TYPE_STRING_DATA ? 0 : t & ~OBJ_TYPE_ARRAY;
}

bool hr_result_is_string_data(const struct hr_scan_result *r, uint32_t obj)
{
	return r->obj_type && obj < r->nobj && r->obj_type[obj] == OBJ_TYPE_STRING_DATA;
}

int64_t hr_result_closure_of(const struct hr_scan_result *r, uint32_t obj)
{
	uint32_t t = r->obj_type && obj < r->nobj ? r->obj_type[obj] : OBJ_TYPE_UNKNOWN;

	return t & OBJ_TYPE_CLOSURE && !(t & OBJ_TYPE_ARRAY) ? (int64_t)(t & ~OBJ_TYPE_CLOSURE) : -1;
}

const struct hr_root_edge *hr_result_root_edges(const struct hr_scan_result *r, size_t *n)
{
	*n = r->nroot_edges;
	return r->root_edges;
}

const struct hr_goroutine_share *hr_result_shares(const struct hr_scan_result *r, size_t *n)
{
	*n = r->nshares;
	return r->shares;
}

uint64_t hr_result_value_offset(const struct hr_scan_result *r, const struct hr_dump *d,
				uint32_t obj)
{
	struct hr_object o = hr_dump_object(d, obj);

	/* Go 1.22's mallocgc: an object with pointers too big for heap bits in its span
	 * (over 512 bytes) and small enough for a size class starts with its type's address */
	if (r->sum.go_minor < 22 || o.size <= 512 || o.size > 32768 ||
	    !hr_dump_object_ptr_count(d, obj))
		return 0;
	return hr_dump_params(d)->ptr_size;
}

const char *hr_result_word_name(const struct hr_scan_result *r, const struct hr_dump *d,
				const struct hr_binary *bin, uint32_t obj, uint64_t off, char *buf,
				size_t cap)
{
	bool array;
	uint32_t type = hr_result_type_of(r, obj, &array);
	uint64_t start = hr_result_value_offset(r, d, obj);

	if (cap)
		buf[0] = '\0';
	if (!bin || off < start)
		return buf;
	return hr_binary_name_offset(bin, type, array, off - start, buf, cap);
}
