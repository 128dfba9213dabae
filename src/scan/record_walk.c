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
static uint32_t record_node(struct hr_scan *s, uint32_t parent, uint32_t obj)
{
	struct hr_object_type t;
	int n;

	if (!hr_dump_object_type(s->dump, obj, &t))
		return parent;
	n = snprintf(s->name_buf, sizeof(s->name_buf), "$ref. (%s%.*s)", t.prefix,
		     (int)(t.name.len < 512 ? t.name.len : 512), (const char *)t.name.ptr);
	uint32_t id = hr_chains_child(s->tree, parent, s->name_buf, (size_t)n);

	if (id == HR_CHAINS_NONE) {
		s->status = HR_ENOMEM;
		return parent;
	}
	return id;
}

/* Claims the object value points into, if any and new, below parent; queues it. */
static int record_reach(struct hr_scan *s, uint64_t value, uint32_t parent)
{
	uint64_t start, size;
	int64_t i = hr_dump_object_span_at(s->dump, value, &start, &size);
	struct record_item *item;
	uint32_t node;

	if (i < 0 || scan_visited(s, (uint32_t)i))
		return HR_OK;
	node = record_node(s, parent, (uint32_t)i);
	scan_claim(s, (uint32_t)i, size, node, false);
	item = hr_array_push((void **)&s->record_queue, &s->nrecord_queue, &s->record_queue_cap,
			     sizeof(*item));
	if (!item)
		return HR_ENOMEM;
	*item = (struct record_item){ (uint32_t)i, node };
	return s->status;
}

int record_follow(struct hr_scan *s, uint64_t value, uint32_t node)
{
	int rc = record_reach(s, value, node);
	uint32_t holder = s->holder;

	for (size_t head = 0; head < s->nrecord_queue && !rc; head++) {
		struct record_item it = ((struct record_item *)s->record_queue)[head];
		struct region r;

		if (scan_object_region(s, it.obj, &s->obj_bits, &s->obj_bits_cap, &r))
			return HR_ENOMEM;
		s->holder = it.obj;
		for (uint64_t w = hr_bit_next(r.bits, 0, r.nwords); w < r.nwords && !rc;
		     w = hr_bit_next(r.bits, w + 1, r.nwords))
			rc = record_reach(s, region_word(s, &r, r.addr + w * s->ps), it.node);
		scan_progress(s, "pass 2", 0);
	}
	s->holder = holder;
	s->nrecord_queue = 0;
	return rc;
}
