/* SPDX-License-Identifier: Apache-2.0 */
/*
 * shares.c - what each goroutine's stack reached first, by chain node: counted as the
 * objects are charged (scan_claim() in pass 1, each drain in pass 2), in a hash keyed
 * by (node, goroutine), so that goroutine labels cost no per-object table beyond the
 * goroutine of each object, and no pass over every object at the end.
 */
#include <stdlib.h>
#include <string.h>

#include "scan_internal.h"

#define SHARES_MIN 64

static size_t slot_of(const struct share_map *m, uint32_t node, uint32_t goroutine)
{
	uint64_t h = ((uint64_t)node << 32 | goroutine) * UINT64_C(0x9E3779B97F4A7C15);

	return (size_t)(h >> 32) & (m->cap - 1);
}

static struct hr_goroutine_share *find(struct share_map *m, uint32_t node, uint32_t goroutine)
{
	size_t i = slot_of(m, node, goroutine);

	while (m->slots[i].goroutine &&
	       (m->slots[i].node != node || m->slots[i].goroutine != goroutine))
		i = (i + 1) & (m->cap - 1);
	return &m->slots[i];
}

static int grow(struct share_map *m)
{
	struct share_map bigger = { .cap = m->cap ? m->cap * 2 : SHARES_MIN };

	bigger.slots = calloc(bigger.cap, sizeof(*bigger.slots));
	if (!bigger.slots)
		return HR_ENOMEM;
	for (size_t i = 0; i < m->cap; i++)
		if (m->slots[i].goroutine)
			*find(&bigger, m->slots[i].node, m->slots[i].goroutine) = m->slots[i];
	bigger.n = m->n;
	free(m->slots);
	*m = bigger;
	return HR_OK;
}

int share_map_add(struct share_map *m, uint32_t node, uint32_t goroutine, uint64_t objects,
		  uint64_t bytes)
{
	struct hr_goroutine_share *sh;

	if ((m->n + 1) * 2 > m->cap && grow(m))
		return HR_ENOMEM;
	sh = find(m, node, goroutine);
	if (!sh->goroutine) {
		*sh = (struct hr_goroutine_share){ node, goroutine, 0, 0 };
		m->n++;
	}
	sh->objects += objects;
	sh->bytes += bytes;
	return HR_OK;
}

int share_map_merge(struct share_map *dst, const struct share_map *src)
{
	for (size_t i = 0; i < src->cap; i++) {
		const struct hr_goroutine_share *sh = &src->slots[i];

		if (sh->goroutine &&
		    share_map_add(dst, sh->node, sh->goroutine, sh->objects, sh->bytes))
			return HR_ENOMEM;
	}
	return HR_OK;
}

void share_map_release(struct share_map *m)
{
	free(m->slots);
	memset(m, 0, sizeof(*m));
}
