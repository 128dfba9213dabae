/* SPDX-License-Identifier: Apache-2.0 */
/*
 * work_queue.c - pass 1's first-in first-out queue of heap objects to walk.
 *
 * A map of millions of entries queues millions of objects at once, so an item is kept
 * small: the object, and its view (chain node, type, aux, mode, element naming) interned
 * in a table (found through a small cache by node and goroutine, then by hash), as two
 * 32-bit words; an offset of the view into the object and an explicit element count,
 * when the view has them, follow as one word each. There are few distinct views: a
 * node's name mostly says its type. Items live in fixed-size chunks, each freed
 * once read, so memory follows the items waiting, not the most ever queued.
 *
 * The elements of a big slice or map were mostly allocated one after the other, so they
 * are objects of consecutive indexes with one view: such a run is one item, the first
 * object and a word counting the others (a slice of 10M pointers queues its targets in
 * a few hundred items, not 80 MB).
 *
 * Items taken off pass through a short lookahead ring in which each object's table
 * entry, contents, page entry and pointer bits are prefetched in turn: walking an object
 * otherwise waits on a cache miss for each. The order of items is unchanged.
 */
#include <stdlib.h>
#include <string.h>

#include "scan_internal.h"

#define ITEM_HAS_OFFSET (UINT32_C(1) << 31)
#define ITEM_HAS_COUNT (UINT32_C(1) << 30)
#define ITEM_HAS_RUN (UINT32_C(1) << 29)   /* a last word: objects after the first */
#define ITEM_STREAMED (UINT32_C(1) << 28) /* struct work's streamed */
#define ITEM_PIECE_CONT (UINT32_C(1) << 27) /* struct work's piece */
#define ITEM_PIECE_MORE (UINT32_C(1) << 26)
#define ITEM_VIEW_MASK (ITEM_PIECE_MORE - 1)
#define ITEM_MAX_WORDS 4
#define CHUNK_WORDS 16380 /* a chunk is 64 KiB */

/* Ring positions (0: next out) at which an item's prefetch stages are started. */
#define CONTENTS_AT 8
#define BITS_AT 3

struct queue_chunk {
	struct queue_chunk *next;
	uint32_t used;
	uint32_t words[CHUNK_WORDS];
};

void queue_release(struct work_queue *q)
{
	struct queue_chunk *c = q->head;

	while (c) {
		struct queue_chunk *next = c->next;

		free(c);
		c = next;
	}
	free(q->spare);
	free(q->views);
	free(q->view_slots);
	memset(q, 0, sizeof(*q));
}

static uint64_t view_hash(const struct view *v)
{
	uint64_t h = (uint64_t)v->node * 0x9E3779B97F4A7C15u ^ (uint64_t)v->type << 32 ^ v->aux;

	h ^= (uint64_t)v->count * 0xC2B2AE3D27D4EB4Fu ^ (uint64_t)v->mode << 8 ^ v->elem_name ^
	     (uint64_t)v->goroutine << 40;
	/* the slot is the low bits: fold the high ones (type, goroutine) down first */
	h ^= h >> 33;
	h *= 0xFF51AFD7ED558CCDu;
	h ^= h >> 33;
	h *= 0xC4CEB9FE1A85EC53u;
	return h ^ h >> 33;
}

static bool view_equal(const struct view *a, const struct view *b)
{
	return a->node == b->node && a->type == b->type && a->aux == b->aux &&
	       a->count == b->count && a->mode == b->mode && a->elem_name == b->elem_name &&
	       a->goroutine == b->goroutine;
}

static int grow_view_slots(struct work_queue *q)
{
	size_t n = q->nview_slots ? q->nview_slots * 2 : 256;
	uint32_t *slots = calloc(n, sizeof(*slots));

	if (!slots)
		return HR_ENOMEM;
	for (size_t v = 0; v < q->nviews; v++) {
		size_t i = (size_t)view_hash(&q->views[v]) & (n - 1);

		while (slots[i])
			i = (i + 1) & (n - 1);
		slots[i] = (uint32_t)v + 1;
	}
	free(q->view_slots);
	q->view_slots = slots;
	q->nview_slots = n;
	return HR_OK;
}

/* The id of view v, interned on first use; -1 when out of memory or ids. */
static int64_t intern_view(struct work_queue *q, const struct view *v)
{
	size_t i;

	if ((q->nviews + 1) * 2 > q->nview_slots && grow_view_slots(q))
		return -1;
	for (i = (size_t)view_hash(v) & (q->nview_slots - 1); q->view_slots[i];
	     i = (i + 1) & (q->nview_slots - 1))
		if (view_equal(&q->views[q->view_slots[i] - 1], v))
			return q->view_slots[i] - 1;
	if (q->nviews > ITEM_VIEW_MASK ||
	    hr_array_reserve((void **)&q->views, &q->views_cap, q->nviews + 1, sizeof(*q->views)))
		return -1;
	q->views[q->nviews] = *v;
	q->view_slots[i] = (uint32_t)q->nviews + 1;
	return (int64_t)q->nviews++;
}

/*
 * The id of view v, from the cache of views recently pushed when it is there: items
 * of a few dozen linked lists alternate between their views, each a miss of last_view,
 * and hashing all of a view's fields to probe the table was a fifth of their walk.
 */
static int64_t view_id(struct work_queue *q, const struct view *v)
{
	uint32_t hash = (v->node ^ v->goroutine << 16) * UINT32_C(0x9E3779B1);
	uint32_t *cached = &q->view_cache[hash >> 24];
	int64_t id;

	_Static_assert(QUEUE_VIEW_CACHE == 256, "the cache's slot is the hash's top 8 bits");

	if (*cached && view_equal(&q->views[*cached - 1], v))
		return *cached - 1;
	if ((id = intern_view(q, v)) >= 0)
		*cached = (uint32_t)id + 1;
	return id;
}

/* Room for one more item of up to ITEM_MAX_WORDS words at the tail. */
static uint32_t *tail_room(struct work_queue *q)
{
	struct queue_chunk *c;

	if (q->tail && q->tail->used + ITEM_MAX_WORDS <= CHUNK_WORDS)
		return q->tail->words + q->tail->used;
	c = q->spare ? q->spare : malloc(sizeof(*c));
	if (!c)
		return NULL;
	q->spare = NULL;
	c->next = NULL;
	c->used = 0;
	if (q->tail)
		q->tail->next = c;
	else
		q->head = c;
	q->tail = c;
	return c->words;
}

/*
 * Adds obj to the item pushed last if that is a run (or a lone object) of tag (view id
 * and ITEM_STREAMED) that obj follows; false if it cannot.
 */
static bool extend_run(struct work_queue *q, uint32_t obj, uint32_t tag)
{
	uint32_t *item;

	if (!q->run || q->tail->used != q->run_end)
		return false;
	item = q->tail->words + q->run - 1;
	if ((item[1] & ~ITEM_HAS_RUN) != tag) /* another view, or an offset or count */
		return false;
	if (item[1] & ITEM_HAS_RUN) {
		if (obj != item[0] + item[2] + 1 || item[2] == UINT32_MAX)
			return false;
		item[2]++;
	} else {
		if (obj != item[0] + 1 || q->tail->used >= CHUNK_WORDS)
			return false;
		item[1] |= ITEM_HAS_RUN;
		item[2] = 1;
		q->run_end = ++q->tail->used;
	}
	q->items++;
	return true;
}

int queue_push(struct work_queue *q, const struct work *w)
{
	bool explicit_count = w->count != 0 && w->count != COUNT_FILL;
	struct view v = { .node = w->node, .type = w->type, .aux = w->aux,
			  .count = explicit_count ? 0 : w->count, .mode = w->mode,
			  .elem_name = w->elem_name, .goroutine = w->goroutine };
	uint32_t *item, n = 2, tag;
	int64_t id = q->last_view;

	if (!q->nviews || !view_equal(&q->views[id], &v)) { /* objects come in runs of a view */
		id = view_id(q, &v);
		q->last_view = id < 0 ? 0 : (uint32_t)id;
	}
	if (id < 0)
		return HR_ENOMEM;
	tag = (uint32_t)id | (w->streamed ? ITEM_STREAMED : 0) |
	      (w->piece & PIECE_CONT ? ITEM_PIECE_CONT : 0) |
	      (w->piece & PIECE_MORE ? ITEM_PIECE_MORE : 0);
	if (!w->offset && !explicit_count && extend_run(q, w->obj, tag))
		return HR_OK;
	if (!(item = tail_room(q)))
		return HR_ENOMEM;
	item[0] = w->obj;
	item[1] = tag;
	if (w->offset) {
		item[1] |= ITEM_HAS_OFFSET;
		item[n++] = w->offset;
	}
	if (explicit_count) {
		item[1] |= ITEM_HAS_COUNT;
		item[n++] = w->count;
	}
	q->run = n == 2 ? (uint32_t)(item - q->tail->words) + 1 : 0; /* runs have neither */
	q->tail->used += n;
	q->run_end = q->tail->used;
	q->items++;
	return HR_OK;
}

/* Takes the oldest item out of the chunks; false when there is none. */
static bool take_item(struct work_queue *q, struct work *w)
{
	uint32_t *item;
	const struct view *v;
	uint32_t n = 2;

	if (!q->items)
		return false;
	if (q->head_pos == q->head->used) { /* the head chunk is read: move on */
		struct queue_chunk *done = q->head;

		q->head = done->next;
		q->head_pos = 0;
		free(q->spare);
		q->spare = done;
	}
	item = q->head->words + q->head_pos;
	v = &q->views[item[1] & ITEM_VIEW_MASK];
	*w = (struct work){ .obj = item[0], .node = v->node, .type = v->type, .aux = v->aux,
			    .count = v->count, .mode = v->mode, .elem_name = v->elem_name,
			    .goroutine = v->goroutine, .streamed = !!(item[1] & ITEM_STREAMED),
			    .piece = (uint8_t)((item[1] & ITEM_PIECE_CONT ? PIECE_CONT : 0) |
					       (item[1] & ITEM_PIECE_MORE ? PIECE_MORE : 0)) };
	if (item[1] & ITEM_HAS_OFFSET)
		w->offset = item[n++];
	if (item[1] & ITEM_HAS_COUNT)
		w->count = item[n++];
	if ((item[1] & ITEM_HAS_RUN) && item[n]) { /* the run's next object stays queued */
		item[0]++;
		item[n]--;
	} else {
		q->head_pos += n + !!(item[1] & ITEM_HAS_RUN);
	}
	q->items--;
	if (!q->items) { /* empty: start the chunk over */
		q->head->used = 0;
		q->head_pos = 0;
		q->run = 0;
	}
	return true;
}

static struct work *ahead_at(struct work_queue *q, unsigned pos)
{
	return &q->ahead[(q->ahead_first + pos) % QUEUE_LOOKAHEAD];
}

static void prefetch(const struct hr_dump *d, const struct work *w, enum hr_prefetch_stage stage)
{
	if (!w->streamed) /* its walk is a worker's: what is read is the worker's log */
		hr_dump_prefetch_object(d, w->obj, w->offset, stage);
}

bool queue_pop(struct work_queue *q, const struct hr_dump *d, struct work *out)
{
	while (q->nahead < QUEUE_LOOKAHEAD && take_item(q, ahead_at(q, q->nahead)))
		prefetch(d, ahead_at(q, q->nahead++), HR_PREFETCH_ENTRY);
	if (!q->nahead)
		return false;
	if (q->nahead > CONTENTS_AT)
		prefetch(d, ahead_at(q, CONTENTS_AT), HR_PREFETCH_CONTENTS);
	if (q->nahead > BITS_AT)
		prefetch(d, ahead_at(q, BITS_AT), HR_PREFETCH_BITS);
	*out = *ahead_at(q, 0);
	q->ahead_first = (q->ahead_first + 1) % QUEUE_LOOKAHEAD;
	q->nahead--;
	return true;
}

bool queue_take(struct work_queue *q, struct work *out)
{
	if (!q->nahead)
		return take_item(q, out);
	*out = *ahead_at(q, 0);
	q->ahead_first = (q->ahead_first + 1) % QUEUE_LOOKAHEAD;
	q->nahead--;
	return true;
}
