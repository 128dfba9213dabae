/* SPDX-License-Identifier: Apache-2.0 */
/*
 * views_internal.h - what views.c and by_dominator.c share.
 */
#ifndef HEAPREF_VIEWS_INTERNAL_H
#define HEAPREF_VIEWS_INTERNAL_H

#include "heapref/views.h"

/* Copies every node of from into to; map[id] is from's node id's node in to. */
bool view_copy_nodes(const struct hr_chains *from, struct hr_chains *to, uint32_t *map);

/* HR_VIEW_BY_DOMINATOR (by_dominator.c). */
struct hr_chains *view_by_dominator(const struct hr_chains *from,
				    const struct hr_view_sources *src, uint32_t max_depth,
				    bool fold_recursion, struct hr_error *err);

#endif
