/* SPDX-License-Identifier: Apache-2.0 */
/*
 * record_walk.c - pass 2 on dumps whose records name types (go1.3 and go1.4: see
 * hr_dump_object_type()). Instead of charging all that one word leads to to one node
 * (mark.c), the walk goes breadth first and charges each object to a node named after
 * its type, "$ref. (main.Entry)" (a reference the records give no name, to a main.Entry),
 * below the node of the object that reached it; an object of no known type stays on that
 * node. The "x. (T)" form lets the tree fold recursion, so a list is one node. Without the binary's DWARF these names are all the
 * chains have below their roots. Such dumps come from Go releases long gone and are
 * small: one thread, no prefetching.
 */
#include <stdio.h>
#include <string.h>

#include "scan_internal.h"

struct record_item {
	uint32_t obj;
	uint32_t node;
};

/* The node object obj is charged to, reached from an object charged to parent. */
static uint32_t record_node(struct walker *wk, uint32_t parent, uint32_t obj)
{
	struct hr_object_type t;
	int n;

	if (!hr_dump_object_type(wk->tables.dump, obj, &t))
		return parent;
	n = snprintf(wk->name_buf, sizeof(wk->name_buf), "$ref. (%s%.*s)", t.prefix,
		     (int)(t.name.len < 512 ? t.name.len : 512), (const char *)t.name.ptr);
	uint32_t id = hr_chains_child(wk->res->tree, parent, wk->name_buf, (size_t)n);

	if (id == HR_CHAINS_NONE) {
		wk->status = HR_ENOMEM;
		return parent;
	}
	return id;
}

/* Claims the object value points into, if any and new, below parent; queues it. */
static int record_reach(struct walker *wk, uint64_t value, uint32_t parent)
{
	struct scan_results *res = wk->res;
	uint64_t start, size;
	int64_t i = hr_dump_object_span_at(wk->tables.dump, value, &start, &size);
	struct record_item *item;
	uint32_t node;

	if (i < 0 || scan_visited(wk, (uint32_t)i))
		return HR_OK;
	node = record_node(wk, parent, (uint32_t)i);
	scan_claim(wk, (uint32_t)i, size, node, false);
	item = hr_array_push((void **)&res->record_queue, &res->nrecord_queue,
			     &res->record_queue_cap, sizeof(*item));
	if (!item)
		return HR_ENOMEM;
	*item = (struct record_item){ (uint32_t)i, node };
	return wk->status;
}

int record_follow(struct walker *wk, uint64_t value, uint32_t node)
{
	const struct scan_tables *tb = &wk->tables;
	struct scan_results *res = wk->res;
	int rc = record_reach(wk, value, node);
	uint32_t holder = wk->holder;

	for (size_t head = 0; head < res->nrecord_queue && !rc; head++) {
		struct record_item it = ((struct record_item *)res->record_queue)[head];
		struct region r;

		if (scan_object_region(tb, it.obj, &wk->obj_bits, &wk->obj_bits_cap, &r))
			return HR_ENOMEM;
		wk->holder = it.obj;
		for (uint64_t w = hr_bit_next(r.bits, 0, r.nwords); w < r.nwords && !rc;
		     w = hr_bit_next(r.bits, w + 1, r.nwords))
			rc = record_reach(wk, region_word(tb, &r, r.addr + w * tb->ps), it.node);
		scan_progress(wk, "pass 2", 0);
	}
	wk->holder = holder;
	res->nrecord_queue = 0;
	return rc;
}
