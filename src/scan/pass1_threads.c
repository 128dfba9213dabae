/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pass1_threads.c - pass 1's heap walk on several threads, with the profile of one.
 *
 * Pass 1 takes heap objects first in, first out, and the first view to reach an object
 * claims it: which chain an object is charged to depends on the order of the walk. The
 * order is kept. This thread takes the queued objects in chunks of CHUNK_ITEMS, in
 * order; workers (other threads, and this one when it has nothing else to do) walk the
 * chunks, each with a walker of its own (struct walker, scan_internal.h: its stack,
 * scratch and node cache), which reads the scan's context and writes what its walk
 * would change in the results to the chunk's log instead: the objects it would claim,
 * the chain nodes it would make, the static objects it would walk, the words it leaves
 * to pass 2. Of the results a worker reads only the tree, the visited bits and where the
 * data and bss segments are. This thread, the results' owner, applies the logs one
 * after the other in chunk order with the scan's own walker, as the walk on one thread
 * would have made those changes: a claim of an object that is visited by then is
 * dropped, a static object that a view took by then is left alone, and the claims that
 * are kept are queued in the same order. What a worker counts for the summary is added
 * to it when the workers stop.
 *
 * A worker sees the visited bits as they were at some time before its chunk is applied.
 * The walk of an object does not depend on them, save for one thing: a pointer word to
 * an object it believes unvisited, that it has no type to follow by, is left to pass 2
 * instead of ticked off. Pass 2 finds that object visited and does nothing. So the
 * profile, and the order in which chain nodes are made, are those of one thread, with
 * any number of workers and whatever their timing: tests/e2e/test_parallel.py checks it.
 *
 * What the claims charge is summed in the log by node and goroutine, less what the
 * dropped ones would have charged: applying a claim is marking the object and queueing
 * it (not an object that surely holds no pointer word: the claim says so, and it is
 * only marked). (Sums do not depend on order.) A queued object that claims nothing
 * leaves no entry.
 *
 * A chain node the tree does not have yet is a pending node of the log (PENDING_NODE
 * | index): a name below a parent, made when the first claim charged to it is applied.
 * Workers read the tree under tree_lock's read side; this thread adds nodes under its
 * write side. Objects of more than DIRECT_BYTES (which may claim millions of objects,
 * a log too big to keep), and the rest of a chunk whose log has grown past its budget,
 * are walked by this thread when their turn comes, as on one thread. A long run of
 * elements in such an object (a []*T of millions) is queued instead as pieces of a few
 * KiB (scan_split_work(), walk.c), which workers share like other items; the static
 * objects the pieces lead to are walked once the last piece is (pieces_open), as they
 * would be after the run's one walk.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "scan_internal.h"

#define CHUNK_ITEMS 64
#define RING_CHUNKS 64          /* chunks taken and not yet applied, at most */
#define DIRECT_BELOW 256
#define DIRECT_BYTES (64u << 10)
#define LOG_BUDGET_MIN 1024    /* entries, see log_budget() */
#define LOG_BUDGET_MAX 16384
#define MAX_WORKERS 64
#define LEFTOVER_ALL_BITS UINT64_MAX
#define SPINS_BEFORE_YIELD 256
#define SPINS_BEFORE_SLEEP 4096
#define STREAM_CHUNKS 128       /* chunks a stream's worker may walk ahead */
#define STREAM_FIFO_MAX 65536   /* objects in its queue: past that, the walk is not narrow */
#define STREAM_AFTER 4096       /* objects walked alone in a narrow walk before a stream */
#define STREAM_AFTER_MAX (UINT64_C(1) << 22)
/*
 * Of a stream's queue, the part this thread keeps to walk itself. Applying a log costs
 * it about half a walk, and a worker's walk costs more than this thread's: on 80 lists
 * of 100,000 nodes pass 1 took 0.37 s with 45%, 0.36 s with 40%, 0.45 s with 35% (the
 * worker too slow), 0.385 s with 50%, 0.50 s alone.
 */
#define STREAM_KEEP_PERCENT 45
/*
 * Objects this thread pops between two looks at the share it applies: when it is far
 * from the split (the lists of one part ended first, or were longer), the stream stops
 * and the next one, soon after, splits the queue as it is then.
 */
#define STREAM_WINDOW 65536
#define STREAM_SHARE_MIN 40 /* percent of the pops that were streamed */
#define STREAM_SHARE_MAX 70
#define STREAM_RESPLIT_AFTER 256

enum stream_state { STREAM_IDLE, STREAM_REQUESTED, STREAM_RUNNING };

enum entry_kind {
	E_ITEM,         /* a queued object, walked by the worker: what follows is its walk's */
	E_DIRECT,       /* a queued object left to this thread */
	E_CLAIM,        /* an object the walk reached first, as far as the worker knew */
	E_STATIC,       /* a static object a typed pointer led to */
	E_LEFTOVER,     /* the walked object's unticked words */
};

#define CLAIM_POINTER_FREE 1 /* the object surely holds no pointer word */
#define CLAIM_STREAMED 2     /* a stream's worker walks the object ahead (see below) */

struct log_entry {
	uint8_t kind;
	uint8_t mode, elem_name;
	union {
		uint8_t seg;          /* E_STATIC: its segment */
		uint8_t claim;        /* E_CLAIM: CLAIM_* flags */
		uint8_t piece;        /* E_ITEM, E_DIRECT: struct work's */
	};
	uint32_t obj;
	uint32_t node;      /* may be pending */
	uint32_t type, aux, count, offset, goroutine; /* E_LEFTOVER: offset, its part */
	uint64_t value;     /* E_CLAIM: size; E_STATIC: address; E_LEFTOVER: offset in bits */
	uint64_t len;       /* E_CLAIM: its charge_sum; E_STATIC: length; E_LEFTOVER: words */
};

/* What a log's claims charge to a node (maybe pending) from a goroutine. */
struct charge_sum {
	uint32_t node, goroutine;
	uint64_t objects, bytes;
};

struct pending_node {
	uint32_t parent;    /* a node of the tree, or pending */
	uint32_t resolved;  /* HR_CHAINS_NONE until made */
	uint32_t name;      /* offset in the log's names */
	uint32_t len;
};

struct p1_log {
	struct log_entry *entries;
	size_t n, cap;
	struct pending_node *nodes;
	size_t nnodes, nodes_cap;
	char *names;
	size_t names_len, names_cap;
	uint64_t *bits;
	size_t nbits, bits_cap;
	struct charge_sum *sums;
	size_t nsums, sums_cap;
	uint32_t *sum_slots;    /* hash of sums: index + 1, 0 free */
	size_t nsum_slots;
	struct work item;       /* the object being walked... */
	bool item_logged;       /* ...and whether its E_ITEM is in the log yet */
	uint32_t *path;         /* scratch of resolve_node() */
	size_t path_cap;
	int status;
	bool streamed;          /* a stream's: its claims are charged one by one, no sums */
	bool broken;            /* a stream's: this thread found a streamed claim visited */
};

struct chunk {
	struct work items[CHUNK_ITEMS];
	uint32_t first_entry[CHUNK_ITEMS]; /* item i's entries start at log.entries[this] */
	size_t nitems;
	bool walked;            /* atomic: set by its walker once its log is complete */
	struct p1_log log;
};

/* A thread that walks chunks (or a stream) into their logs, with a walker of its own. */
struct worker {
	struct walker walker;   /* its log set while it walks a chunk */
	struct p1_pool *pool;
	pthread_t thread;
	bool running;
};

/*
 * A narrow walk's part that one worker walks ahead (see "streams" below), applied by
 * this thread. What each side writes sits on cache lines of its own: the other side
 * reads it in its waiting loop.
 */
struct stream {
	/* set by this thread while the worker is idle, then only read */
	struct chunk *ring;         /* STREAM_CHUNKS */
	uint64_t *seen;             /* the worker's visited bits: see stream_walk() */
	struct work *seeds;         /* the queued objects it starts from, in order */
	size_t nseeds, seeds_cap;
	unsigned chunk_items;
	/* the worker's own */
	_Alignas(64) struct work *fifo; /* its queue: [fifo_first, fifo_end) */
	size_t fifo_first, fifo_end, fifo_cap;
	/* written by the worker, read by this thread */
	_Alignas(64) uint64_t published; /* atomic: chunks walked */
	bool done;                  /* atomic: it publishes no more */
	int state;                  /* atomic: enum stream_state */
	/* written by this thread, read by the worker */
	_Alignas(64) uint64_t consumed; /* atomic: chunks applied, free to walk into again */
	bool cancel;                /* atomic: the worker is to stop */
	/* this thread's own */
	_Alignas(64) bool active;   /* streamed items in the queue are the worker's to walk */
	uint64_t head, known;       /* the chunk to apply from; chunks known published */
	size_t head_item;           /* the item of it applied next */
	uint64_t applied_items;     /* in this stream */
	uint64_t window_pops, window_streamed; /* objects popped in this window, streamed */
	bool resplit;               /* stopped to share the queue anew */
};

/*
 * Chunks by sequence number: [applied, walk_next) walked or being walked, [walk_next,
 * taken) waiting for a worker. This thread takes and applies them; walkers claim one by
 * advancing walk_next. A worker with nothing to do spins a while, then sleeps on work.
 */
struct p1_pool {
	const struct scan_ctx *ctx;
	struct scan_results *res;  /* workers read only what struct scan_results says */
	struct walker *owner;   /* the walker of this thread (the results' owner) */
	pthread_mutex_t lock;   /* for work, quit and idle workers going to sleep */
	pthread_cond_t work;    /* a chunk was taken, or quit */
	pthread_rwlock_t tree_lock;
	struct chunk *ring;
	uint64_t taken, walk_next; /* atomic */
	uint64_t applied;
	size_t log_budget;      /* entries of a chunk's log before the rest goes E_DIRECT */
	size_t stream_budget;   /* of a stream's: its ring's logs take as much in all */
	unsigned idle_workers;  /* atomic: asleep or going to sleep on work */
	bool quit;              /* atomic */
	struct worker *workers; /* [0]: this thread's */
	unsigned nworkers;
	struct stream stream;
};

static void stream_stop(struct p1_pool *p);
static void stream_release(struct stream *st);

/* --- the log: what a worker records ------------------------------------------------ */

static void log_work(struct log_entry *e, const struct work *w);

static struct log_entry *log_push(struct walker *wk, uint8_t kind)
{
	struct p1_log *log = wk->log;
	struct log_entry *e;

	if (!log->item_logged) { /* the object's first entry: the object first */
		log->item_logged = true;
		if (!(e = log_push(wk, E_ITEM)))
			return NULL;
		log_work(e, &log->item);
	}
	e = hr_array_push((void **)&log->entries, &log->n, &log->cap, sizeof(*e));
	if (!e) {
		wk->status = HR_ENOMEM;
		return NULL;
	}
	e->kind = kind;
	return e;
}

static uint64_t sum_hash(uint32_t node, uint32_t goroutine)
{
	uint64_t h = ((uint64_t)node << 32 | goroutine) * 0x9E3779B97F4A7C15u;

	return h ^ h >> 31;
}

static int grow_sum_slots(struct p1_log *log)
{
	size_t n = log->nsum_slots ? log->nsum_slots * 2 : 64;
	uint32_t *slots = calloc(n, sizeof(*slots));

	if (!slots)
		return HR_ENOMEM;
	for (size_t k = 0; k < log->nsums; k++) {
		size_t i = (size_t)sum_hash(log->sums[k].node, log->sums[k].goroutine) & (n - 1);

		while (slots[i])
			i = (i + 1) & (n - 1);
		slots[i] = (uint32_t)k + 1;
	}
	free(log->sum_slots);
	log->sum_slots = slots;
	log->nsum_slots = n;
	return HR_OK;
}

/* The index of the log's sum for (node, goroutine), made if new; -1 out of memory. */
static int64_t sum_index(struct p1_log *log, uint32_t node, uint32_t goroutine)
{
	size_t i;
	struct charge_sum *c;

	if ((log->nsums + 1) * 2 > log->nsum_slots && grow_sum_slots(log))
		return -1;
	for (i = (size_t)sum_hash(node, goroutine) & (log->nsum_slots - 1); log->sum_slots[i];
	     i = (i + 1) & (log->nsum_slots - 1)) {
		c = &log->sums[log->sum_slots[i] - 1];
		if (c->node == node && c->goroutine == goroutine)
			return log->sum_slots[i] - 1;
	}
	if (!(c = hr_array_push((void **)&log->sums, &log->nsums, &log->sums_cap, sizeof(*c))))
		return -1;
	*c = (struct charge_sum){ node, goroutine, 0, 0 };
	log->sum_slots[i] = (uint32_t)log->nsums;
	return (int64_t)log->nsums - 1;
}

static void log_work(struct log_entry *e, const struct work *w)
{
	e->obj = w->obj;
	e->node = w->node;
	e->type = w->type;
	e->aux = w->aux;
	e->count = w->count;
	e->offset = w->offset;
	e->goroutine = w->goroutine;
	e->mode = w->mode;
	e->elem_name = w->elem_name;
	e->piece = w->piece; /* a claim's flags are set after */
}

static struct work work_of(const struct log_entry *e, uint32_t node)
{
	return (struct work){ .obj = e->obj, .node = node, .type = e->type, .aux = e->aux,
			      .offset = e->offset, .count = e->count, .mode = e->mode,
			      .elem_name = e->elem_name, .goroutine = e->goroutine,
			      .streamed = e->kind == E_CLAIM && (e->claim & CLAIM_STREAMED),
			      .piece = e->kind == E_CLAIM ? 0 : e->piece };
}

uint32_t pass1_log_child(struct walker *wk, uint32_t parent, const char *name, size_t len)
{
	struct p1_log *log = wk->log;
	struct pending_node *p;

	if (!(parent & PENDING_NODE)) {
		uint32_t id;

		pthread_rwlock_rdlock(wk->res->tree_lock);
		id = hr_chains_find(wk->res->tree, parent, name, len);
		pthread_rwlock_unlock(wk->res->tree_lock);
		if (id != HR_CHAINS_NONE)
			return id & PENDING_NODE ? HR_CHAINS_NONE : id; /* 2^31 nodes: no memory */
	}
	if (log->nnodes >= PENDING_NODE - 1 || len > UINT32_MAX ||
	    log->names_len + len > UINT32_MAX ||
	    hr_array_reserve((void **)&log->names, &log->names_cap, log->names_len + len, 1) ||
	    !(p = hr_array_push((void **)&log->nodes, &log->nnodes, &log->nodes_cap, sizeof(*p))))
		return HR_CHAINS_NONE; /* the caller sets HR_ENOMEM */
	memcpy(log->names + log->names_len, name, len);
	*p = (struct pending_node){ parent, HR_CHAINS_NONE, (uint32_t)log->names_len,
				    (uint32_t)len };
	log->names_len += len;
	return PENDING_NODE | (uint32_t)(log->nnodes - 1);
}

void pass1_log_claim(struct walker *wk, const struct work *w, uint64_t size, bool pointer_free)
{
	struct p1_log *log = wk->log;
	struct log_entry *e = log_push(wk, E_CLAIM);
	uint32_t goroutine = w->goroutine && wk->ctx->keep_goroutines ? w->goroutine : 0;
	int64_t k = log->streamed ? 0 : sum_index(log, w->node, goroutine);

	if (!e || k < 0) {
		wk->status = HR_ENOMEM;
		return;
	}
	log_work(e, w);
	e->claim = pointer_free ? CLAIM_POINTER_FREE : 0;
	e->value = size;
	e->len = (uint64_t)k;
	if (!log->streamed) {
		log->sums[k].objects++;
		log->sums[k].bytes += size;
	}
}

void pass1_log_static(struct walker *wk, const struct static_view *v, uint64_t len)
{
	struct log_entry *e = log_push(wk, E_STATIC);

	if (!e)
		return;
	e->node = v->node;
	e->type = v->type;
	e->aux = v->aux;
	e->count = v->count;
	e->mode = v->mode;
	e->elem_name = v->elem_name;
	e->seg = v->seg;
	e->value = v->addr;
	e->len = len;
}

int pass1_log_leftover(struct walker *wk, uint32_t obj, uint32_t node, const uint64_t *bits,
		       uint64_t nwords, uint32_t part)
{
	struct p1_log *log = wk->log;
	size_t words = (size_t)hr_bit_words(nwords);
	struct log_entry *e = log_push(wk, E_LEFTOVER);

	if (!e)
		return HR_ENOMEM;
	e->obj = obj;
	e->node = node;
	e->len = nwords;
	e->offset = part;
	e->value = LEFTOVER_ALL_BITS;
	if (!bits)
		return HR_OK;
	if (hr_array_reserve((void **)&log->bits, &log->bits_cap, log->nbits + words,
			     sizeof(*log->bits)))
		return HR_ENOMEM;
	memcpy(log->bits + log->nbits, bits, words * sizeof(*bits));
	e->value = log->nbits;
	log->nbits += words;
	return HR_OK;
}

static void log_reset(struct p1_log *log)
{
	log->n = log->nnodes = log->names_len = log->nbits = 0;
	if (log->nsums)
		memset(log->sum_slots, 0, log->nsum_slots * sizeof(*log->sum_slots));
	log->nsums = 0;
	log->item_logged = true;
	log->status = HR_OK;
	log->broken = false;
}

static void log_release(struct p1_log *log)
{
	free(log->entries);
	free(log->nodes);
	free(log->names);
	free(log->bits);
	free(log->sums);
	free(log->sum_slots);
	free(log->path);
}

/* --- a worker walks a chunk -------------------------------------------------------- */

static void prefetch_item(const struct scan_tables *tb, const struct chunk *ch, size_t i,
			  enum hr_prefetch_stage stage)
{
	if (i < ch->nitems)
		hr_dump_prefetch_object(tb->dump, ch->items[i].obj, ch->items[i].offset, stage);
}

static void log_begin(struct walker *wk, struct chunk *ch)
{
	log_reset(&ch->log);
	wk->log = &ch->log;
	wk->log_seq++;
	wk->status = HR_OK;
}

static void log_end(struct walker *wk, struct chunk *ch)
{
	ch->log.status = wk->status;
	wk->log = NULL;
}

/* Walks item i of the chunk into its log, or leaves it to this thread (E_DIRECT). */
static void walk_item(struct worker *worker, struct chunk *ch, size_t i)
{
	struct walker *wk = &worker->walker;
	const struct work *w = &ch->items[i];
	const struct p1_pool *p = worker->pool;
	struct log_entry *e;

	ch->first_entry[i] = (uint32_t)ch->log.n;
	if (ch->log.n >= (ch->log.streamed ? p->stream_budget : p->log_budget) ||
	    scan_work_bytes(&wk->tables, w) > DIRECT_BYTES) {
		if ((e = log_push(wk, E_DIRECT)))
			log_work(e, w);
		return;
	}
	if (!ch->log.streamed && !(w->piece & PIECE_CONT)) /* a stream's: counted as applied */
		wk->counts.worker_objects++;
	ch->log.item = *w; /* logged with its first entry; a stream's have first_entry */
	ch->log.item_logged = ch->log.streamed;
	if (w->piece && !ch->log.streamed) {
		/* logged even if nothing else is: applying it tells where the run's pieces
		 * end (scan_results.pieces_open) */
		ch->log.item_logged = true;
		if ((e = log_push(wk, E_ITEM)))
			log_work(e, w);
	}
	wk->holder = w->obj;
	wk->cur_goroutine = w->goroutine;
	if (scan_walk_object(wk, w) && !wk->status)
		wk->status = HR_ENOMEM;
	ch->log.item_logged = true;
}

static void walk_chunk(struct worker *worker, struct chunk *ch)
{
	struct walker *wk = &worker->walker;

	log_begin(wk, ch);
	for (size_t i = 0; i < 8 && i < ch->nitems; i++)
		prefetch_item(&wk->tables, ch, i, HR_PREFETCH_ENTRY);
	for (size_t i = 0; i < ch->nitems && !wk->status; i++) {
		prefetch_item(&wk->tables, ch, i + 8, HR_PREFETCH_ENTRY);
		prefetch_item(&wk->tables, ch, i + 5, HR_PREFETCH_CONTENTS);
		prefetch_item(&wk->tables, ch, i + 2, HR_PREFETCH_BITS);
		walk_item(worker, ch, i);
	}
	log_end(wk, ch);
}

static struct chunk *ring_at(struct p1_pool *p, uint64_t seq)
{
	return &p->ring[seq % RING_CHUNKS];
}

/* A moment's pause in a wait that is expected to be short. */
static void relax(unsigned *spins)
{
	if (++*spins % SPINS_BEFORE_YIELD == 0) {
		sched_yield();
		return;
	}
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

/* The next chunk taken that no worker walks yet, now this caller's; NULL if none. */
static struct chunk *claim_chunk(struct p1_pool *p)
{
	uint64_t seq = __atomic_load_n(&p->walk_next, __ATOMIC_ACQUIRE);

	while (seq < __atomic_load_n(&p->taken, __ATOMIC_ACQUIRE))
		if (__atomic_compare_exchange_n(&p->walk_next, &seq, seq + 1, false,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			return ring_at(p, seq);
	return NULL;
}

/* Walks the next chunk waiting, if any. */
static bool walk_next_chunk(struct p1_pool *p, struct worker *worker)
{
	struct chunk *ch = claim_chunk(p);

	if (!ch)
		return false;
	walk_chunk(worker, ch);
	__atomic_store_n(&ch->walked, true, __ATOMIC_RELEASE);
	return true;
}

/* --- a worker walks a stream ahead of this thread ------------------------------------ */

static int fifo_push(struct stream *st, const struct work *w)
{
	size_t left = st->fifo_end - st->fifo_first;

	if (st->fifo_first > left) { /* more taken than left: move what is left down */
		memmove(st->fifo, st->fifo + st->fifo_first, left * sizeof(*st->fifo));
		st->fifo_first = 0;
		st->fifo_end = left;
	}
	if (hr_array_reserve((void **)&st->fifo, &st->fifo_cap, st->fifo_end + 1,
			     sizeof(*st->fifo)))
		return HR_ENOMEM;
	st->fifo[st->fifo_end++] = *w;
	return HR_OK;
}

static int fifo_push_to(void *st, const struct work *w)
{
	return fifo_push(st, w);
}

/* Whether obj was visited as far as the worker knows; it is from now on. */
static bool seen_before(struct stream *st, uint32_t obj)
{
	uint64_t *word = &st->seen[obj >> 6], bit = UINT64_C(1) << (obj & 63);
	bool seen = *word & bit;

	*word |= bit;
	return seen;
}

/*
 * Queues, to walk on from, the objects that the chunk's entries from `from` on claimed
 * first as far as the worker knows, and marks their claims CLAIM_STREAMED: this thread
 * queues them so marked if the claim holds. Not those of a pending chain node: it is
 * the log's own.
 */
static int queue_claims(const struct scan_tables *tb, struct stream *st, struct chunk *ch,
			size_t from)
{
	for (size_t i = from; i < ch->log.n; i++) {
		struct log_entry *e = &ch->log.entries[i];
		struct work w;

		if (e->kind != E_CLAIM || seen_before(st, e->obj) ||
		    (e->claim & CLAIM_POINTER_FREE) || (e->node & PENDING_NODE))
			continue;
		e->claim |= CLAIM_STREAMED;
		w = work_of(e, e->node);
		if (scan_split_work(tb, &w, fifo_push_to, st)) /* as this thread will queue it */
			return HR_ENOMEM;
		hr_dump_prefetch_object(tb->dump, w.obj, w.offset, HR_PREFETCH_ENTRY);
	}
	return HR_OK;
}

/* The worker's queue's item `ahead` after the next one's, prefetched for stage. */
static void prefetch_fifo(const struct scan_tables *tb, const struct stream *st, size_t ahead,
			  enum hr_prefetch_stage stage)
{
	if (st->fifo_first + ahead < st->fifo_end)
		hr_dump_prefetch_object(tb->dump, st->fifo[st->fifo_first + ahead].obj,
					st->fifo[st->fifo_first + ahead].offset, stage);
}

/*
 * A chunk of the worker's queue walked, each item's claims queued as soon as it is
 * walked: the queue then holds the next ones to prefetch (a few dozen lists' next
 * nodes), which it would not if they were queued once the chunk is walked.
 */
static void walk_stream_chunk(struct worker *worker, struct stream *st, struct chunk *ch)
{
	struct walker *wk = &worker->walker;

	log_begin(wk, ch);
	ch->nitems = 0;
	while (ch->nitems < st->chunk_items && st->fifo_first < st->fifo_end && !wk->status) {
		size_t k = ch->nitems++, from = ch->log.n;

		ch->items[k] = st->fifo[st->fifo_first++];
		prefetch_fifo(&wk->tables, st, 7, HR_PREFETCH_CONTENTS);
		prefetch_fifo(&wk->tables, st, 2, HR_PREFETCH_BITS);
		walk_item(worker, ch, k);
		if (!wk->status)
			wk->status = queue_claims(&wk->tables, st, ch, from);
	}
	log_end(wk, ch);
}

/*
 * The worker's side of a stream: a walk of the seeds' part of the heap in its own
 * first-in first-out order, in chunks, each published once its log is complete, up to
 * STREAM_CHUNKS ahead of those this thread has applied. It stops when its queue is
 * empty or it is cancelled.
 *
 * It walks with visited bits of its own: those of the scan when it starts, and each
 * object it has logged a claim of since (by the time this thread applies a log, the
 * objects of the claims before are visited, whoever claimed them). Reading the scan's
 * bits would cost a line from this thread's cache for most objects: a list's next nodes
 * share a line with those this thread is marking.
 */
static void stream_walk(struct worker *worker, struct stream *st)
{
	struct walker *wk = &worker->walker;
	uint64_t *visited = wk->res->visited;
	uint64_t seq = 0;
	unsigned spins = 0;
	int rc = HR_OK;

	for (size_t k = 0; k < hr_bit_words(wk->ctx->nobj); k++)
		st->seen[k] = __atomic_load_n(&visited[k], __ATOMIC_RELAXED);
	wk->visited = st->seen; /* its claims are checked against these now */
	st->fifo_first = st->fifo_end = 0;
	for (size_t k = 0; k < st->nseeds && !rc; k++) /* queued: visited */
		rc = fifo_push(st, &st->seeds[k]);
	/* a queue grown wide ends the stream: this thread's turns wide too, and stops it */
	while (!rc && st->fifo_first < st->fifo_end &&
	       st->fifo_end - st->fifo_first <= STREAM_FIFO_MAX &&
	       !__atomic_load_n(&st->cancel, __ATOMIC_ACQUIRE)) {
		struct chunk *ch;

		if (seq - __atomic_load_n(&st->consumed, __ATOMIC_ACQUIRE) >= STREAM_CHUNKS) {
			relax(&spins); /* far enough ahead */
			continue;
		}
		ch = &st->ring[seq % STREAM_CHUNKS];
		walk_stream_chunk(worker, st, ch);
		rc = ch->log.status; /* published: this thread fails with it */
		__atomic_store_n(&st->published, ++seq, __ATOMIC_RELEASE);
	}
	wk->visited = visited;
	__atomic_store_n(&st->done, true, __ATOMIC_RELEASE);
	__atomic_store_n(&st->state, STREAM_IDLE, __ATOMIC_RELEASE);
}

/* Walks the stream this thread asked for, if no other worker took it. */
static bool walk_stream(struct p1_pool *p, struct worker *worker)
{
	int requested = STREAM_REQUESTED;

	if (__atomic_load_n(&p->stream.state, __ATOMIC_ACQUIRE) != STREAM_REQUESTED ||
	    !__atomic_compare_exchange_n(&p->stream.state, &requested, STREAM_RUNNING, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return false;
	stream_walk(worker, &p->stream);
	return true;
}

/* Sleeps until a chunk is taken or the pool stops (seq_cst: see take_chunks()). */
static void wait_for_work(struct p1_pool *p)
{
	pthread_mutex_lock(&p->lock);
	__atomic_add_fetch(&p->idle_workers, 1, __ATOMIC_SEQ_CST);
	while (!p->quit && __atomic_load_n(&p->walk_next, __ATOMIC_SEQ_CST) >=
				   __atomic_load_n(&p->taken, __ATOMIC_SEQ_CST) &&
	       __atomic_load_n(&p->stream.state, __ATOMIC_SEQ_CST) != STREAM_REQUESTED)
		pthread_cond_wait(&p->work, &p->lock);
	__atomic_sub_fetch(&p->idle_workers, 1, __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&p->lock);
}

static void *worker_main(void *arg)
{
	struct worker *worker = arg;
	struct p1_pool *p = worker->pool;
	unsigned spins = 0;

	while (!__atomic_load_n(&p->quit, __ATOMIC_ACQUIRE)) {
		if (walk_next_chunk(p, worker) || walk_stream(p, worker))
			spins = 0;
		else if (spins < SPINS_BEFORE_SLEEP)
			relax(&spins);
		else
			wait_for_work(p), spins = 0;
	}
	return NULL;
}

/* --- this thread applies the logs ---------------------------------------------------- */

/* The tree's node for id, making pending ones (ancestors first); HR_CHAINS_NONE: no memory. */
static uint32_t resolve_node(struct walker *wk, struct p1_log *log, uint32_t id)
{
	size_t n = 0;
	uint32_t j = id;

	while ((j & PENDING_NODE) && log->nodes[j & ~PENDING_NODE].resolved == HR_CHAINS_NONE) {
		if (hr_array_reserve((void **)&log->path, &log->path_cap, n + 1, sizeof(*log->path)))
			return HR_CHAINS_NONE;
		log->path[n++] = j & ~PENDING_NODE;
		j = log->nodes[j & ~PENDING_NODE].parent;
	}
	while (n > 0) {
		struct pending_node *p = &log->nodes[log->path[--n]];
		uint32_t parent = p->parent & PENDING_NODE
				  ? log->nodes[p->parent & ~PENDING_NODE].resolved : p->parent;

		p->resolved = scan_tree_child(wk, parent, log->names + p->name, p->len);
		if (p->resolved == HR_CHAINS_NONE)
			return HR_CHAINS_NONE;
	}
	return id & PENDING_NODE ? log->nodes[id & ~PENDING_NODE].resolved : id;
}

/*
 * A chunk's claims are charged with the log's sums; a stream's one by one, as scan_claim()
 * does (a stream may stop halfway through a chunk).
 */
static int apply_claim(struct walker *wk, struct p1_log *log, const struct log_entry *e)
{
	struct work w;

	if (scan_visited(wk, e->obj)) { /* an earlier chunk, or this thread's walk, was first */
		if (log->streamed) {
			log->broken |= (e->claim & CLAIM_STREAMED) != 0; /* see stream_apply() */
		} else {
			log->sums[e->len].objects--;
			log->sums[e->len].bytes -= e->value;
		}
		return HR_OK;
	}
	w = work_of(e, resolve_node(wk, log, e->node));
	if (w.node == HR_CHAINS_NONE)
		return HR_ENOMEM;
	scan_mark(wk, w.obj, w.node);
	if (log->streamed)
		scan_charge(wk, w.node, e->goroutine, 1, e->value, true);
	scan_queue_view(wk, &w, e->claim & CLAIM_POINTER_FREE);
	return wk->status;
}

/* Charges what the claims applied charge (their nodes exist: the claims made them). */
static int apply_sums(struct walker *wk, struct p1_log *log)
{
	for (size_t k = 0; k < log->nsums && !wk->status; k++) {
		const struct charge_sum *c = &log->sums[k];
		uint32_t node;

		if (!c->objects)
			continue;
		if ((node = resolve_node(wk, log, c->node)) == HR_CHAINS_NONE)
			return HR_ENOMEM;
		scan_charge(wk, node, c->goroutine, c->objects, c->bytes, true);
	}
	return wk->status;
}

static int apply_static(struct walker *wk, struct p1_log *log, const struct log_entry *e)
{
	struct static_view v = { .addr = e->value, .type = e->type, .aux = e->aux,
				 .count = e->count, .mode = e->mode, .elem_name = e->elem_name,
				 .seg = e->seg };
	struct static_view *kept = static_accept(wk, &v, e->len);

	if (kept && (kept->node = resolve_node(wk, log, e->node)) == HR_CHAINS_NONE)
		return HR_ENOMEM;
	return wk->status;
}

static int apply_entry(struct walker *wk, struct p1_log *log, const struct log_entry *e)
{
	struct work w;
	int rc;

	switch (e->kind) {
	case E_ITEM:
	case E_DIRECT: /* the next object: the static objects the last one led to come first */
		if ((rc = scan_walk_statics(wk)))
			return rc;
		wk->res->pieces_open = e->piece & PIECE_MORE;
		wk->holder = e->obj;
		wk->cur_goroutine = e->goroutine;
		if (e->kind == E_ITEM)
			return HR_OK;
		w = work_of(e, e->node);
		return scan_walk_object(wk, &w);
	case E_CLAIM:
		return apply_claim(wk, log, e);
	case E_STATIC:
		return apply_static(wk, log, e);
	default:
		return scan_add_leftover(wk, e->obj, e->node,
					 e->value == LEFTOVER_ALL_BITS ? NULL : log->bits + e->value,
					 e->len, e->offset);
	}
}

#define CLAIMS_AHEAD 8 /* log entries */

/* Before entry i is applied: the visited word of a claim CLAIMS_AHEAD entries on. */
static void prefetch_claim_ahead(const struct walker *wk, const struct p1_log *log, size_t i)
{
	const struct log_entry *ahead =
		i + CLAIMS_AHEAD < log->n ? &log->entries[i + CLAIMS_AHEAD] : NULL;

	__asm__ volatile(""); /* kept: see heap_index_prefetch() */
	/* a claim's visited word (the walker's: the results'), random in a bitmap of the
	 * whole heap, and read first */
	if (!ahead || ahead->kind != E_CLAIM)
		return;
	__builtin_prefetch(&wk->visited[ahead->obj >> 6], 1);
	/* and what is kept of it when asked, written as randomly (suspects, why) */
	if (wk->res->paths.node)
		__builtin_prefetch(&wk->res->paths.node[ahead->obj], 1);
	if (wk->res->paths.holder)
		__builtin_prefetch(&wk->res->paths.holder[ahead->obj], 1);
	if (wk->res->obj_type)
		__builtin_prefetch(&wk->res->obj_type[ahead->obj], 1);
}

static int apply_log(struct walker *wk, struct p1_log *log)
{
	int rc = log->status;

	for (size_t i = 0; i < log->n && !rc; i++) {
		prefetch_claim_ahead(wk, log, i);
		rc = apply_entry(wk, log, &log->entries[i]);
	}
	if (!rc)
		rc = apply_sums(wk, log);
	return rc ? rc : scan_walk_statics(wk);
}

/* --- the pool ------------------------------------------------------------------------ */

/*
 * A worker of pool p: a walker of its own over the scan's context and results, with the
 * pool's lock around the binary's lazy loading; its log is set chunk by chunk.
 */
static void worker_init(struct worker *worker, struct p1_pool *p)
{
	walker_init(&worker->walker, p->ctx, p->res);
	worker->pool = p;
}

/* Joins the worker's thread (if it runs), adds its counts to res and frees its walker. */
static void worker_release(struct worker *worker, struct scan_results *res)
{
	if (worker->running)
		pthread_join(worker->thread, NULL);
	walker_add_counts(&worker->walker, res);
	walker_release(&worker->walker);
}

static void pool_stop(struct p1_pool *p)
{
	if (!p)
		return;
	stream_stop(p);
	pthread_mutex_lock(&p->lock);
	__atomic_store_n(&p->quit, true, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->lock);
	for (unsigned k = 0; k < p->nworkers; k++)
		worker_release(&p->workers[k], p->res);
	for (size_t i = 0; i < RING_CHUNKS; i++)
		log_release(&p->ring[i].log);
	stream_release(&p->stream);
	p->res->tree_lock = NULL;
	pthread_rwlock_destroy(&p->tree_lock);
	pthread_cond_destroy(&p->work);
	pthread_mutex_destroy(&p->lock);
	free(p->workers);
	free(p->ring);
	free(p);
}

/*
 * Entries a chunk's log may take before the rest of the chunk is left to the applying
 * thread: the logs of the ring (48 bytes an entry) are kept to about 1/16 of the heap's
 * bytes, so that a small heap is not analysed with more memory than its index (fewer
 * entries cost speed: more objects are walked by one thread). A stream's ring of logs
 * is held to as much again (stream_budget).
 */
static size_t log_budget(const struct scan_results *res)
{
	uint64_t n = res->sum.total_bytes / (16 * RING_CHUNKS * sizeof(struct log_entry));

	return n < LOG_BUDGET_MIN ? LOG_BUDGET_MIN : n > LOG_BUDGET_MAX ? LOG_BUDGET_MAX : n;
}

/*
 * Starts threads - 1 workers besides this thread's (whose walker is owner); NULL when out
 * of memory. Until pool_stop(), the owner's walker and the results take the pool's locks.
 */
static struct p1_pool *pool_start(struct walker *owner, unsigned threads)
{
	struct p1_pool *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->ctx = owner->ctx;
	p->res = owner->res;
	p->owner = owner;
	p->log_budget = log_budget(p->res);
	p->stream_budget = p->log_budget * RING_CHUNKS / STREAM_CHUNKS;
	p->ring = calloc(RING_CHUNKS, sizeof(*p->ring));
	p->workers = calloc(threads, sizeof(*p->workers));
	if (!p->ring || !p->workers) {
		free(p->ring);
		free(p->workers);
		free(p);
		return NULL;
	}
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->work, NULL);
	pthread_rwlock_init(&p->tree_lock, NULL);
	p->res->tree_lock = &p->tree_lock;
	p->nworkers = threads;
	for (unsigned k = 0; k < threads; k++) {
		worker_init(&p->workers[k], p);
		/* a worker that does not start leaves its share to the others: no error */
		p->workers[k].running = k > 0 && !pthread_create(&p->workers[k].thread, NULL,
								   worker_main, &p->workers[k]);
	}
	return p;
}

/* Wakes the sleeping workers, after a seq_cst store of what they wait for. */
static void wake_workers(struct p1_pool *p)
{
	if (__atomic_load_n(&p->idle_workers, __ATOMIC_SEQ_CST)) {
		pthread_mutex_lock(&p->lock);
		pthread_cond_broadcast(&p->work);
		pthread_mutex_unlock(&p->lock);
	}
}

/*
 * Takes queued objects into whole chunks while the ring has room; into a last part of
 * one too when no chunk waits for a worker (partial: the queue will not fill one soon).
 */
static void take_chunks(struct p1_pool *p, bool partial)
{
	struct work_queue *queue = &p->res->queue;
	uint64_t taken = p->taken; /* this thread is the only one to change it */
	unsigned chunk_objects = p->ctx->opts.chunk_objects;
	size_t queued, size = chunk_objects && chunk_objects < CHUNK_ITEMS ? chunk_objects
									     : CHUNK_ITEMS;

	while (taken - p->applied < RING_CHUNKS && (queued = queue_length(queue)) &&
	       (queued >= size || partial)) {
		struct chunk *ch = ring_at(p, taken++);
		uint64_t weight = 0;

		ch->nitems = 0;
		/*
		 * A piece of a run may claim an object an element: a chunk takes pieces of
		 * up to a quarter of its log's budget in elements, so that their claims
		 * are logged rather than left to this thread, and the ring's logs stay
		 * small (records-1g's peak: 124 MB with the whole budget, 97 MB so).
		 */
		while (ch->nitems < size && weight < p->log_budget / 4 &&
		       queue_take(queue, &ch->items[ch->nitems])) {
			const struct work *w = &ch->items[ch->nitems++];

			weight += w->piece ? w->count : 1;
		}
		ch->walked = false;
		partial = false;
	}
	if (taken == p->taken)
		return;
	/* seq_cst, as the sleeper's: either it sees the chunks, or this sees it sleeping */
	__atomic_store_n(&p->taken, taken, __ATOMIC_SEQ_CST);
	wake_workers(p);
}

/* Whether no chunk taken waits for a worker. */
static bool workers_may_idle(struct p1_pool *p)
{
	return __atomic_load_n(&p->walk_next, __ATOMIC_ACQUIRE) == p->taken;
}

/*
 * Whether the walk is narrow: so few objects queued (linked lists) that handing them to
 * workers costs more than walking them here. (The test knob sends everything through.)
 */
static bool walk_is_narrow(size_t queued, const struct hr_scan_options *opts)
{
	return queued < DIRECT_BELOW && !opts->chunk_objects;
}

void pass1_feed(struct walker *wk)
{
	struct p1_pool *p = wk->res->pool;

	/*
	 * The objects this thread queues while it walks one (a map's buckets, millions of
	 * elements) come after those taken: the workers may walk them meanwhile. Not while
	 * the walk is narrow: a chunk taken from a few dozen linked lists would have this
	 * thread wait for a worker (woken from its sleep) to walk what it would walk itself.
	 * Nor while a stream is on: the streamed items are for this thread to pop.
	 */
	if (!walk_is_narrow(queue_length(&p->res->queue), &p->ctx->opts) && !p->stream.active)
		take_chunks(p, false);
}

/* Applies the oldest chunk once walked, walking chunks meanwhile. */
static int apply_oldest(struct walker *wk, struct p1_pool *p)
{
	struct chunk *ch = ring_at(p, p->applied);
	unsigned spins = 0;
	int rc;

	while (!__atomic_load_n(&ch->walked, __ATOMIC_ACQUIRE))
		if (!walk_next_chunk(p, &p->workers[0]))
			relax(&spins); /* a worker is on it: it has at most CHUNK_ITEMS objects */
	rc = apply_log(wk, &ch->log);
	p->applied++;
	return rc;
}

/* --- streams: a narrow walk shared ------------------------------------------------------ */

/*
 * In a narrow walk, this thread puts aside part of the queue, the seeds, for a worker to
 * walk ahead of it (stream_walk()), and walks the rest itself. The seeds stay queued,
 * marked streamed, and so are the objects the worker walks on to once this thread has
 * applied their claims: this thread pops the streamed ones in their turn and applies the
 * worker's log of each instead of walking it. The worker's queue holds the same objects
 * in the same order: the seeds in queue order, then what their walks claimed, in log
 * order, as this thread queues them. So the worker's chunks come in the order they are
 * needed, and a log is what walking its object would do: the profile is unchanged.
 *
 * A streamed claim that this thread finds visited (another part of the heap led there
 * first) means the worker walks on from an object this thread will not queue: the
 * stream stops, and the streamed objects still queued are walked as any other. So does
 * it when the walk grows wide (the chunks take over) or the worker's log is not the
 * one expected. A stream that stopped early makes the next one wait longer. One whose
 * share of this thread's pops strays far from the split (STREAM_SHARE_MIN/MAX) stops
 * too, for the next, soon after, to split the queue as it is then.
 */

static bool same_work(const struct work *a, const struct work *b)
{
	return a->obj == b->obj && a->node == b->node && a->type == b->type &&
	       a->aux == b->aux && a->offset == b->offset && a->count == b->count &&
	       a->mode == b->mode && a->elem_name == b->elem_name &&
	       a->goroutine == b->goroutine && a->piece == b->piece;
}

/* Stops the stream (the worker will see it between chunks). */
static void stream_stop(struct p1_pool *p)
{
	p->stream.active = false;
	__atomic_store_n(&p->stream.cancel, true, __ATOMIC_RELEASE);
}

/* Whether the worker has published its last chunk and this thread applied them all. */
static bool stream_ended(struct stream *st)
{
	if (st->head < st->known || !__atomic_load_n(&st->done, __ATOMIC_ACQUIRE))
		return false;
	st->known = __atomic_load_n(&st->published, __ATOMIC_ACQUIRE);
	return st->head == st->known;
}

/* The chunk to apply from, once the worker has published it; NULL if it never will. */
static struct chunk *stream_head(struct stream *st)
{
	unsigned spins = 0;

	while (st->head == st->known) {
		if (stream_ended(st))
			return NULL;
		st->known = __atomic_load_n(&st->published, __ATOMIC_ACQUIRE);
		if (st->head == st->known)
			relax(&spins);
	}
	return &st->ring[st->head % STREAM_CHUNKS];
}

#define STREAM_ITEMS_AHEAD 8 /* items whose entries are prefetched, in two steps */

/* Item k of the chunk at seq, if the worker has published it. */
static const struct chunk *stream_chunk_at(struct stream *st, uint64_t seq, size_t *k)
{
	const struct chunk *ch = &st->ring[seq % STREAM_CHUNKS];

	if (*k < ch->nitems) /* read once published only: see below */
		return ch;
	*k -= ch->nitems;
	if (++seq >= st->known && seq >= (st->known = __atomic_load_n(&st->published,
								       __ATOMIC_ACQUIRE)))
		return NULL;
	ch = &st->ring[seq % STREAM_CHUNKS];
	return *k < ch->nitems ? ch : NULL;
}

/*
 * What this thread reads of the items ahead of the head one, written by the worker:
 * most are still in its cache. The item and where its entries are, at twice the
 * distance; then its entries (up to 3 lines, most items' all). Into the next chunk too.
 */
static void stream_prefetch(struct stream *st)
{
	size_t far = st->head_item + 2 * STREAM_ITEMS_AHEAD, near = st->head_item + STREAM_ITEMS_AHEAD;
	const struct chunk *ch;

	__asm__ volatile(""); /* kept: see heap_index_prefetch() */
	if ((ch = stream_chunk_at(st, st->head, &far))) {
		__builtin_prefetch(&ch->items[far]);
		__builtin_prefetch(&ch->first_entry[far]);
	}
	if ((ch = stream_chunk_at(st, st->head, &near))) {
		const char *e = (const char *)&ch->log.entries[ch->first_entry[near]];

		__builtin_prefetch(e);
		__builtin_prefetch(e + 64);
		__builtin_prefetch(e + 128);
	}
}

/*
 * Applies the worker's log of w, the streamed object popped, if it is the one the
 * stream has next (*applied); else stops the stream.
 */
static int stream_apply(struct walker *wk, struct p1_pool *p, const struct work *w,
			bool *applied)
{
	struct stream *st = &p->stream;
	struct chunk *ch = stream_head(st);
	size_t k = st->head_item, from, to;
	bool broken;
	int rc = HR_OK;

	if (!ch || !same_work(w, &ch->items[k])) {
		stream_stop(p);
		return HR_OK;
	}
	if (ch->log.status)
		return ch->log.status;
	stream_prefetch(st);
	from = ch->first_entry[k];
	to = k + 1 < ch->nitems ? ch->first_entry[k + 1] : ch->log.n;
	for (size_t i = from; i < to && !rc; i++) {
		prefetch_claim_ahead(wk, &ch->log, i);
		rc = apply_entry(wk, &ch->log, &ch->log.entries[i]);
	}
	/* a streamed claim found visited: the worker walks on from an object not queued */
	broken = ch->log.broken;
	if (from == to || ch->log.entries[from].kind != E_DIRECT) {
		wk->res->sum.worker_objects++;
		wk->res->sum.stream_objects++;
	}
	if (++st->head_item == ch->nitems) { /* the chunk is the worker's again */
		st->head_item = 0;
		__atomic_store_n(&st->consumed, ++st->head, __ATOMIC_RELEASE);
	}
	st->applied_items++;
	*applied = true;
	if (broken) {
		stream_stop(p);
		wk->res->sum.stream_stops++;
	}
	return rc;
}

static struct chunk *stream_ring(void)
{
	struct chunk *ring = calloc(STREAM_CHUNKS, sizeof(*ring));

	for (size_t i = 0; ring && i < STREAM_CHUNKS; i++)
		ring[i].log.streamed = true;
	return ring;
}

/* Whether some worker runs on a thread of its own (one may have failed to start). */
static bool has_worker_thread(const struct p1_pool *p)
{
	for (unsigned k = 1; k < p->nworkers; k++)
		if (p->workers[k].running)
			return true;
	return false;
}

/*
 * Gives a worker the queue but its first STREAM_KEEP_PERCENT to walk ahead, marking
 * those items streamed (the queue is narrow: taken out and put back). False when it
 * cannot now.
 */
static bool stream_start(struct walker *wk, struct p1_pool *p)
{
	const struct hr_scan_options *opts = &wk->ctx->opts;
	struct work_queue *queue = &wk->res->queue;
	struct stream *st = &p->stream;
	size_t n = queue_length(queue), k;

	if (n < 2 || !has_worker_thread(p) ||
	    __atomic_load_n(&st->state, __ATOMIC_ACQUIRE) != STREAM_IDLE)
		return false;
	if ((!st->ring && !(st->ring = stream_ring())) ||
	    (!st->seen && !(st->seen = malloc(hr_bit_words(wk->ctx->nobj) * sizeof(*st->seen)))) ||
	    hr_array_reserve((void **)&st->seeds, &st->seeds_cap, n, sizeof(*st->seeds)))
		return false; /* no memory for it: walk alone */
	for (k = 0; k < n && queue_take(queue, &st->seeds[k]); k++)
		;
	st->nseeds = 0;
	for (k = 0; k < n && !wk->status; k++) {
		struct work w = st->seeds[k];

		w.streamed = k >= (n * STREAM_KEEP_PERCENT + 99) / 100; /* keeps one of two */
		if (w.streamed)
			st->seeds[st->nseeds++] = w;
		if (queue_push(queue, &w))
			wk->status = HR_ENOMEM;
	}
	if (wk->status)
		return false;
	st->chunk_items = opts->stream_chunk && opts->stream_chunk < CHUNK_ITEMS
			  ? opts->stream_chunk : CHUNK_ITEMS;
	st->published = st->consumed = st->head = st->known = 0;
	st->head_item = 0;
	st->applied_items = st->window_pops = st->window_streamed = 0;
	st->resplit = false;
	st->done = st->cancel = false;
	st->active = true;
	__atomic_store_n(&st->state, STREAM_REQUESTED, __ATOMIC_SEQ_CST);
	wake_workers(p);
	wk->res->sum.streams++;
	return true;
}

static void stream_release(struct stream *st)
{
	if (st->ring)
		for (size_t i = 0; i < STREAM_CHUNKS; i++)
			log_release(&st->ring[i].log);
	free(st->ring);
	free(st->seen);
	free(st->seeds);
	free(st->fifo);
}

/* When the next stream may start: objects walked alone since the last one, and how many. */
struct stream_plan {
	uint64_t alone, after;
	bool fixed; /* the test knob's: no backing off */
};

/*
 * After a stream: one that stopped before it did as much as the wait for it waits
 * longer; one stopped to split the queue anew, little.
 */
static void stream_replan(struct stream_plan *plan, uint64_t applied, bool resplit)
{
	plan->alone = 0;
	if (plan->fixed)
		return;
	if (resplit)
		plan->after = STREAM_RESPLIT_AFTER;
	else if (applied >= plan->after)
		plan->after = STREAM_AFTER;
	else if (plan->after < STREAM_AFTER_MAX)
		plan->after *= 2;
}

/*
 * One object of queue (the results'), on this thread, as pass 1 did before it had
 * workers, or from a stream.
 */
static int walk_alone(struct walker *wk, struct work_queue *queue, struct p1_pool *p)
{
	struct work w;

	if (!queue_pop(queue, wk->tables.dump, &w))
		return HR_OK;
	wk->holder = w.obj;
	wk->cur_goroutine = w.goroutine;
	if (p && p->stream.active) {
		struct stream *st = &p->stream;
		bool applied = false;
		int rc;

		if (++st->window_pops == STREAM_WINDOW) {
			uint64_t share = st->window_streamed * 100 / STREAM_WINDOW;

			st->window_pops = st->window_streamed = 0;
			if (share < STREAM_SHARE_MIN || share > STREAM_SHARE_MAX) {
				stream_stop(p);
				st->resplit = true;
			}
		}
		if (w.streamed && st->active) {
			st->window_streamed++;
			rc = stream_apply(wk, p, &w, &applied);
			if (rc || applied) {
				/* only now: an E_DIRECT entry of its log walks the static objects
				 * found so far first, by the last piece's pieces_open, as in a chunk */
				wk->res->pieces_open = w.piece & PIECE_MORE;
				return rc;
			}
		}
	}
	wk->res->pieces_open = w.piece & PIECE_MORE;
	return scan_walk_object(wk, &w);
}

/*
 * Starts a stream when a narrow walk has gone on for plan->after objects (and the pool
 * with it: a short list needs none). Whether one is on.
 */
static bool stream_due(struct walker *wk, struct p1_pool **pool, unsigned threads,
		       struct stream_plan *plan)
{
	if (threads < 2 || plan->alone < plan->after || queue_length(&wk->res->queue) < 2)
		return false;
	plan->alone = 0;
	if (!*pool && !(*pool = wk->res->pool = pool_start(wk, threads))) {
		wk->status = HR_ENOMEM;
		return false;
	}
	return stream_start(wk, *pool);
}

int pass1_walk_heap(struct walker *wk)
{
	const struct hr_scan_options *opts = &wk->ctx->opts;
	struct scan_results *res = wk->res;
	unsigned threads = opts->threads ? opts->threads : wk->ctx->cpus;
	struct p1_pool *p = NULL;
	struct stream_plan plan = { 0, opts->stream_after ? opts->stream_after : STREAM_AFTER,
				    opts->stream_after != 0 };
	bool streaming = false;
	int rc;

	if (threads > MAX_WORKERS)
		threads = MAX_WORKERS;
	res->sum.pass1_threads = threads;
	while (!(rc = scan_walk_statics(wk))) {
		bool idle = !p || p->applied == p->taken;
		size_t queued = queue_length(&res->queue);
		bool narrow = walk_is_narrow(queued, opts);

		if (streaming && p->stream.active && (!narrow || stream_ended(&p->stream)))
			stream_stop(p);
		if (streaming && !p->stream.active) {
			stream_replan(&plan, p->stream.applied_items, p->stream.resplit);
			streaming = false;
		}
		if (idle && !queued)
			break;
		if (idle && (threads < 2 || narrow)) {
			if (!streaming) {
				streaming = stream_due(wk, &p, threads, &plan);
				if ((rc = wk->status))
					break;
				plan.alone += !streaming;
			}
			rc = walk_alone(wk, &res->queue, p);
		} else {
			/* started when first wanted: a list needs none */
			if (!p && !(p = res->pool = pool_start(wk, threads))) {
				rc = HR_ENOMEM;
				break;
			}
			take_chunks(p, workers_may_idle(p));
			rc = apply_oldest(wk, p);
		}
		if (rc)
			break;
		scan_progress(wk, "pass 1", 0);
	}
	pool_stop(p);
	res->pool = NULL;
	wk->cur_goroutine = 0;
	return rc;
}
