/* SPDX-License-Identifier: Apache-2.0 */
/*
 * leaked_groups.c - the memory of leaked goroutines as suspects (see suspects.h): the
 * goroutines the runtime's definition finds leaked (leaks.h), grouped by the function of
 * their go statement, and what each group alone keeps alive (the heap that only their
 * stacks reach). A group that keeps the threshold or more is a suspect of its own kind.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suspects_internal.h"

/* A leaked goroutine's group: its creator's function index + 1 (0: no creator known). */
struct creator_group {
	int64_t fn;
	uint32_t count, first; /* goroutines, and the first of them */
};

static int64_t creator_of(const struct suspect_ctx *c, const struct hr_goroutine *g)
{
	return c->src->img ? hr_image_func_at(c->src->img, g->gopc) : -1;
}

/* A leaked goroutine and its creator, to sort by creator. */
struct leaked_one {
	int64_t fn;
	uint32_t g;
};

static int by_creator(const void *pa, const void *pb)
{
	const struct leaked_one *a = pa, *b = pb;

	if (a->fn != b->fn)
		return a->fn < b->fn ? -1 : 1;
	return a->g < b->g ? -1 : a->g > b->g;
}

/*
 * The leaked goroutines' groups by creator (sorted by it: one pass), and group_of[] for
 * every goroutine (ngroups: not leaked).
 */
static struct creator_group *group_leaked(const struct suspect_ctx *c, uint32_t *group_of,
					  size_t *ngroups)
{
	size_t ng, n = 0;
	const struct hr_goroutine *g = hr_dump_goroutines(c->src->model, &ng);
	struct creator_group *groups = malloc((ng + 1) * sizeof(*groups));
	struct leaked_one *l = malloc((ng + 1) * sizeof(*l));

	*ngroups = 0;
	if (!groups || !l) {
		free(groups);
		free(l);
		return NULL;
	}
	for (uint32_t i = 0; i < ng; i++)
		if (c->src->leaks->verdict[i] == HR_LEAK_YES)
			l[n++] = (struct leaked_one){ creator_of(c, &g[i]), i };
	qsort(l, n, sizeof(*l), by_creator);
	for (uint32_t i = 0; i < ng; i++)
		group_of[i] = UINT32_MAX;
	for (size_t k = 0; k < n; k++) {
		if (!k || l[k].fn != l[k - 1].fn)
			groups[(*ngroups)++] = (struct creator_group){ l[k].fn, 0, l[k].g };
		groups[*ngroups - 1].count++;
		group_of[l[k].g] = (uint32_t)(*ngroups - 1);
	}
	for (uint32_t i = 0; i < ng; i++)
		if (group_of[i] == UINT32_MAX)
			group_of[i] = (uint32_t)*ngroups;
	free(l);
	return groups;
}

static int describe_group(const struct suspect_ctx *c, const struct creator_group *grp,
			  uint64_t bytes, uint64_t objects, struct hr_suspect *s)
{
	size_t ng;
	const struct hr_goroutine *g = &hr_dump_goroutines(c->src->model, &ng)[grp->first];
	const char *fn = grp->fn >= 0 ? hr_binary_func(c->src->img->bin, (size_t)grp->fn)->name
				      : "?";
	int wl = (int)(g->wait_reason.len < 100 ? g->wait_reason.len : 100);

	*s = (struct hr_suspect){ .kind = HR_SUSPECT_GOROUTINES, .bytes = bytes,
				  .objects = objects, .chain = HR_CHAINS_NONE, .goid = g->goid,
				  .goroutines = grp->count, .leaked = grp->count };
	s->roots = calloc(2, sizeof(*s->roots));
	s->creator = strdup(fn);
	if (!s->roots || !s->creator || !(s->roots[0] = strdup(fn)))
		return HR_ENOMEM;
	s->nroots = 1;
	s->point.kind = HR_PILE_GOROUTINES;
	s->point.count = grp->count;
	s->point.bytes = bytes;
	s->point.objects = objects;
	s->point.type = strdup("goroutines");
	s->point.chain = strdup("");
	s->point.what = wl ? str_printf("%" PRIu32 " leaked goroutine%s created by %s, blocked in %.*s",
					grp->count, grp->count == 1 ? "" : "s", fn, wl,
					(const char *)g->wait_reason.ptr)
			   : str_printf("%" PRIu32 " leaked goroutine%s created by %s", grp->count,
					grp->count == 1 ? "" : "s", fn);
	return s->point.type && s->point.chain && s->point.what ? HR_OK : HR_ENOMEM;
}

int find_leaked_groups(const struct suspect_ctx *c, uint64_t threshold, struct hr_suspect **v,
		       size_t *n, struct hr_error *err)
{
	size_t ng, ngroups = 0, cap = *n;
	struct creator_group *groups = NULL;
	uint32_t *group_of = NULL;
	bool *wanted = NULL;
	uint64_t *bytes = NULL, *objects = NULL;
	int rc = HR_ENOMEM;

	hr_dump_goroutines(c->src->model, &ng);
	if (!c->src->leaks || !c->src->leaks->leaked || !c->src->img)
		return HR_OK;
	if (!(group_of = calloc(ng + 1, sizeof(*group_of))) ||
	    !(groups = group_leaked(c, group_of, &ngroups)) ||
	    !(wanted = calloc(ngroups + 2, sizeof(*wanted))) ||
	    !(bytes = calloc(ngroups + 2, sizeof(*bytes))) ||
	    !(objects = calloc(ngroups + 2, sizeof(*objects))))
		goto out;
	for (size_t k = 0; k < ngroups; k++)
		wanted[k] = true;
	if ((rc = hr_goroutine_leaks_retained(c->src->leaks, c->src->model, group_of, ngroups + 1,
					      wanted, bytes, objects, err)))
		goto out;
	for (size_t k = 0; k < ngroups; k++) {
		struct hr_suspect *s;

		if (!bytes[k] || bytes[k] < threshold)
			continue;
		if (!(s = hr_array_push((void **)v, n, &cap, sizeof(**v)))) {
			rc = HR_ENOMEM;
			goto out;
		}
		if ((rc = describe_group(c, &groups[k], bytes[k], objects[k], s)))
			goto out;
	}
	rc = HR_OK;
out:
	free(group_of);
	free(groups);
	free(wanted);
	free(bytes);
	free(objects);
	if (rc == HR_ENOMEM)
		return hr_error_set(err, rc, "out of memory for the leaked goroutines");
	return rc;
}
