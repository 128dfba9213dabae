/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mark.c - pass 2's marking: everything the objects one fallback word reached lead to,
 * by the GC bitmaps alone (scanner.c charges the word's own target and calls
 * mark_drain()).
 *
 * All of it is charged to one node, so neither the order in which it is found nor the
 * thread that finds it changes the result. A marker takes objects off its stack a batch
 * at a time and prefetches each object's table entry, then contents, page entry and
 * pointer bits for the whole batch before reading any, so that their cache misses
 * overlap. It claims an object by setting its visited bit and counts what it claimed;
 * the counts are charged when the drain is over.
 *
 * When a drain's stack grows past PARALLEL_MIN objects and there is a second processor,
 * a second marker thread shares the work: objects move between the two stacks through a
 * pool, in packets of PACKET, and claims are atomic. The set of objects claimed is the
 * same whoever claims them (all that is reachable from the stack through objects not
 * visited before the drain), and so are the sums.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "scan_internal.h"

#define MARK_BATCH 16
#define PACKET 512
#define PARALLEL_MIN 8192

/* Where markers that ran dry get work: objects the busy one set aside. */
struct mark_pool {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	uint32_t *items;
	size_t n, cap;
	unsigned idle;          /* markers waiting in take_work(); atomic */
	unsigned markers;
	bool done;              /* all markers idle and the pool empty; or a marker failed */
};

struct marker {
	const struct scan_tables *tb; /* the context's: another thread writes the walker */
	uint64_t *visited;       /* the results' */
	struct scan_paths paths; /* the results', if kept: each claimer writes its own */
	struct mark_pool *pool;  /* NULL while marking alone */
	uint32_t *stack;
	size_t n, cap;
	uint64_t *bits;          /* scratch: the bits of the object being read */
	size_t bits_cap;
	uint64_t objects, bytes; /* claimed, not yet charged */
	uint32_t node;           /* what the drain charges to, for the paths if kept */
	uint32_t holder;         /* the object being read */
	struct share_map *shares; /* with goroutines kept: the scan's, or the helper's own */
	uint32_t goroutine;      /* the drain's: all it reaches descends from one word */
	int status;
};

/* Sets obj's visited bit; false if it was set already. Atomic while sharing the work. */
static bool claim(const struct marker *m, uint32_t obj)
{
	uint64_t *word = &m->visited[obj >> 6], bit = UINT64_C(1) << (obj & 63);

	if (!m->pool) {
		if (*word & bit)
			return false;
		*word |= bit;
		return true;
	}
	if (__atomic_load_n(word, __ATOMIC_RELAXED) & bit) /* most are: skip the write */
		return false;
	return !(__atomic_fetch_or(word, bit, __ATOMIC_RELAXED) & bit);
}

static void push(struct marker *m, uint32_t obj)
{
	if (hr_array_reserve((void **)&m->stack, &m->cap, m->n + 1, sizeof(*m->stack))) {
		m->status = HR_ENOMEM;
		return;
	}
	m->stack[m->n++] = obj;
}

/* Claims and stacks the object value points into, if any and not visited. */
static void reach(struct marker *m, uint64_t value)
{
	uint64_t start, size;
	int64_t i = hr_dump_object_span_at(m->tb->dump, value, &start, &size);

	if (i < 0 || !claim(m, (uint32_t)i))
		return;
	scan_paths_set(&m->paths, (uint32_t)i, m->node, m->holder);
	if (m->goroutine && share_map_add(m->shares, m->node, m->goroutine, 1, size))
		m->status = HR_ENOMEM;
	m->objects++;
	m->bytes += size;
	push(m, (uint32_t)i);
}

/* Reads up to MARK_BATCH objects off the stack, prefetched together. */
static void mark_batch(struct marker *m)
{
	static const enum hr_prefetch_stage stages[] = {
		HR_PREFETCH_ENTRY, HR_PREFETCH_CONTENTS, HR_PREFETCH_BITS,
	};
	const struct scan_tables *tb = m->tb;
	size_t n = m->n < MARK_BATCH ? m->n : MARK_BATCH;
	uint32_t batch[MARK_BATCH];

	m->n -= n;
	memcpy(batch, m->stack + m->n, n * sizeof(*batch));
	for (size_t k = 0; k < sizeof(stages) / sizeof(stages[0]); k++)
		for (size_t i = 0; i < n; i++)
			hr_dump_prefetch_object(tb->dump, batch[i], 0, stages[k]);
	for (size_t i = 0; i < n && !m->status; i++) {
		struct region r;

		if (scan_object_region(tb, batch[i], &m->bits, &m->bits_cap, &r)) {
			m->status = HR_ENOMEM;
			return;
		}
		m->holder = batch[i];
		for (uint64_t w = hr_bit_next(r.bits, 0, r.nwords); w < r.nwords && !m->status;
		     w = hr_bit_next(r.bits, w + 1, r.nwords))
			reach(m, region_word(tb, &r, r.addr + w * tb->ps));
	}
}

/* --- two markers ---------------------------------------------------------------------- */

/* Ends the drain for every marker (all ran dry, or one failed). Lock held. */
static void finish_pool(struct mark_pool *p)
{
	p->done = true;
	pthread_cond_broadcast(&p->wake);
}

/* Fills an empty stack from the pool, waiting while the other marker works; false when done. */
static bool take_work(struct marker *m)
{
	struct mark_pool *p = m->pool;
	size_t n;

	pthread_mutex_lock(&p->lock);
	while (!p->n && !p->done) { /* idle is read without the lock by share_work() */
		if (__atomic_add_fetch(&p->idle, 1, __ATOMIC_RELAXED) == p->markers) {
			finish_pool(p);
			break;
		}
		pthread_cond_wait(&p->wake, &p->lock);
		__atomic_sub_fetch(&p->idle, 1, __ATOMIC_RELAXED);
	}
	n = p->done ? 0 : p->n < PACKET ? p->n : PACKET;
	if (n && hr_array_reserve((void **)&m->stack, &m->cap, n, sizeof(*m->stack))) {
		m->status = HR_ENOMEM;
		finish_pool(p);
		n = 0;
	}
	p->n -= n;
	memcpy(m->stack, p->items + p->n, n * sizeof(*m->stack));
	m->n = n;
	pthread_mutex_unlock(&p->lock);
	return n > 0;
}

/* Sets a packet aside for a marker that ran dry, if one waits and this one has plenty. */
static void share_work(struct marker *m)
{
	struct mark_pool *p = m->pool;

	if (m->n < 2 * PACKET || !__atomic_load_n(&p->idle, __ATOMIC_RELAXED))
		return;
	pthread_mutex_lock(&p->lock);
	if (hr_array_reserve((void **)&p->items, &p->cap, p->n + PACKET, sizeof(*p->items))) {
		m->status = HR_ENOMEM;
	} else {
		m->n -= PACKET;
		memcpy(p->items + p->n, m->stack + m->n, PACKET * sizeof(*p->items));
		p->n += PACKET;
		pthread_cond_signal(&p->wake);
	}
	pthread_mutex_unlock(&p->lock);
}

/* A marker sharing the work, until all of it is done. */
static void mark_shared(struct marker *m)
{
	while (m->n || take_work(m)) {
		mark_batch(m);
		if (m->status) {
			pthread_mutex_lock(&m->pool->lock);
			finish_pool(m->pool);
			pthread_mutex_unlock(&m->pool->lock);
			return;
		}
		share_work(m);
	}
}

static void *helper_main(void *arg)
{
	mark_shared(arg);
	return NULL;
}

/*
 * Marks the rest of main's stack with a helper thread; their counts end in main's.
 * HR_EUSAGE if no thread could be started (main then goes on alone).
 */
static int mark_in_parallel(struct marker *main)
{
	struct mark_pool pool = { .markers = 2 };
	struct share_map helper_shares = { 0 };
	struct marker helper = { .tb = main->tb, .visited = main->visited, .paths = main->paths,
				 .pool = &pool, .node = main->node, .shares = &helper_shares,
				 .goroutine = main->goroutine };
	pthread_t thread;

	if (pthread_mutex_init(&pool.lock, NULL))
		return HR_EUSAGE;
	if (pthread_cond_init(&pool.wake, NULL)) {
		pthread_mutex_destroy(&pool.lock);
		return HR_EUSAGE;
	}
	main->pool = &pool;
	if (pthread_create(&thread, NULL, helper_main, &helper)) {
		main->pool = NULL;
		pthread_cond_destroy(&pool.wake);
		pthread_mutex_destroy(&pool.lock);
		return HR_EUSAGE;
	}
	mark_shared(main);
	pthread_join(thread, NULL);
	main->pool = NULL;
	main->objects += helper.objects;
	main->bytes += helper.bytes;
	if (!main->status)
		main->status = helper.status;
	if (!main->status && share_map_merge(main->shares, &helper_shares))
		main->status = HR_ENOMEM;
	share_map_release(&helper_shares);
	free(helper.stack);
	free(helper.bits);
	free(pool.items);
	pthread_cond_destroy(&pool.wake);
	pthread_mutex_destroy(&pool.lock);
	return HR_OK;
}

/* --- the drain ------------------------------------------------------------------------ */

int mark_drain(struct walker *wk, uint32_t node)
{
	struct scan_results *res = wk->res;
	struct marker m = { .tb = &wk->ctx->tables, .visited = res->visited, .paths = res->paths,
			    .stack = res->stack2, .n = res->nstack2, .cap = res->stack2_cap,
			    .bits = wk->obj_bits, .bits_cap = wk->obj_bits_cap, .node = node,
			    .shares = &res->shares,
			    .goroutine = wk->ctx->keep_goroutines ? wk->cur_goroutine : 0 };
	bool alone = wk->ctx->cpus < 2;

	if (!m.n)
		return HR_OK;
	while (m.n && !m.status) {
		if (m.n >= PARALLEL_MIN && !alone) {
			alone = true; /* once per drain: after this the stack is empty */
			if (!mark_in_parallel(&m))
				break;
		}
		mark_batch(&m);
		scan_progress(wk, "pass 2", m.objects);
	}
	/* the buffers go back to the results and the walker, to be reused by the next drain */
	res->stack2 = m.stack;
	res->nstack2 = 0;
	res->stack2_cap = m.cap;
	wk->obj_bits = m.bits;
	wk->obj_bits_cap = m.bits_cap;
	hr_chains_charge(res->tree, node, m.objects, m.bytes);
	res->sum.fallback_objects += m.objects;
	res->sum.fallback_bytes += m.bytes;
	return m.status;
}
