/* SPDX-License-Identifier: Apache-2.0 */
/*
 * core_bounds.c - how much work a corrupt core can ask of the reader. A core is hostile
 * input: one changed word can make a list of the runtime point back into itself, or an
 * array claim a billion entries. Everything the reader follows is held to what the core
 * can actually hold, the bytes of memory in its file (img.held): the runtime's
 * structures are distinct pieces of that memory, so a list of nodes of S bytes has at
 * most held / S of them, and an array of N entries of S bytes needs N * S bytes.
 *
 * Linked lists are walked by one helper, core_walk_list(): it charges every node to the
 * bound and checks for a loop with Brent's algorithm (one node remembered; a loop is
 * found within about twice the length of the list plus its loop), so a list pointing
 * back into itself fails on its second lap, not after the bound.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include "core_internal.h"

static const char *plural(uint64_t n)
{
	return n == 1 ? "y" : "ies";
}

int core_check_count(struct core_reader *r, const char *what, uint64_t n, uint64_t size)
{
	uint64_t bytes;

	if (hr_mul_ok(n, size ? size : 1, &bytes) && bytes <= r->img.held)
		return HR_OK;
	return hr_error_set(r->err, HR_EINPUT, "%s: %s claims %" PRIu64 " entr%s of %" PRIu64
			    " bytes, more than the %" PRIu64 " bytes of memory in the core can hold "
			    "(a corrupt core?)", r->img.path, what, n, plural(n), size, r->img.held);
}

void list_walk_begin(struct list_walk *w, const char *budget, const char *node,
		     uint64_t node_size)
{
	*w = (struct list_walk){ .budget = budget, .node = node, .node_size = node_size };
	list_walk_restart(w, "%s", budget);
}

void list_walk_restart(struct list_walk *w, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(w->list, sizeof(w->list), fmt, ap);
	va_end(ap);
	w->in_list = 0;
	w->mark = 0;
	w->lap = 1; /* the first node is remembered */
	w->lap_len = 1;
}

int list_walk_charge(struct core_reader *r, struct list_walk *w, uint64_t bytes)
{
	if (hr_add_ok(w->bytes, bytes, &w->bytes) && w->bytes <= r->img.held)
		return HR_OK;
	return hr_error_set(r->err, HR_EINPUT, "%s: %s has more entries than the %" PRIu64 " bytes "
			    "of memory in the core can hold (%" PRIu64 " so far; a corrupt core?)",
			    r->img.path, w->budget, r->img.held, w->nodes);
}

/*
 * Brent's algorithm, one node at a time: the walk is compared with the node it
 * remembered, which moves to the current node whenever the lap since it reaches a
 * power of two. Once that lap is as long as the loop, and the remembered node is on it,
 * the walk comes back to it.
 */
static int list_walk_visit(struct core_reader *r, struct list_walk *w, uint64_t node)
{
	if (node == w->mark)
		return hr_error_set(r->err, HR_EINPUT, "%s: %s loops back to %s 0x%" PRIx64 " after "
				    "%" PRIu64 " entr%s (a corrupt core?)", r->img.path, w->list,
				    w->node, node, w->in_list, plural(w->in_list));
	if (w->lap == w->lap_len) {
		w->mark = node;
		w->lap_len *= 2;
		w->lap = 0;
	}
	w->lap++;
	w->nodes++;
	w->in_list++;
	return list_walk_charge(r, w, w->node_size ? w->node_size : r->ps);
}

int core_walk_list(struct core_reader *r, struct list_walk *w, uint64_t first,
		   const struct rt_field *next, const char *next_what, list_node_fn visit,
		   void *ctx)
{
	int rc = HR_OK;

	for (uint64_t node = first; node && !rc; node = cr_field(r, node, next, next_what)) {
		if ((rc = list_walk_visit(r, w, node)))
			return rc;
		rc = visit(r, w, node, ctx);
	}
	return rc ? rc : r->failed ? cr_fail_report(r) : HR_OK;
}
