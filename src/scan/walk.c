/* SPDX-License-Identifier: Apache-2.0 */
/*
 * walk.c - the typed walk of one piece of memory (a heap object, a global in the data
 * or bss segment, a goroutine's stack) and the names of the chain nodes it charges.
 *
 * The walk keeps its own stack of frames (struct vframe) instead of recursing: a frame
 * is a value of some type at some address; a struct or an array stays on the stack as
 * a cursor while its members or elements are pushed one at a time above it. Pointers do
 * not push frames: the object they reach is charged and queued (scanner.c), and walked
 * later as a region of its own. So the stack is only as deep as types nest.
 *
 * A frame's chain node is made only when an object is charged to it or below it
 * (frame_node()), so fields whose pointers are nil or lead to objects already reached
 * make no nodes. Values with no unticked pointer word left in their bytes are skipped
 * whole, which is what makes large pointer-free arrays and sparse arrays cheap.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scan_internal.h"

/* --- the walker ------------------------------------------------------------------------ */

void walker_init(struct walker *wk, const struct scan_ctx *ctx, struct scan_results *res)
{
	memset(wk, 0, sizeof(*wk));
	wk->tables = ctx->tables;
	wk->ctx = ctx;
	wk->res = res;
	wk->visited = res->visited;
	wk->holder = HR_SCAN_BY_ROOT;
	wk->nil_nowhere = -1;
}

void walker_release(struct walker *wk)
{
	free(wk->frames);
	free(wk->path);
	free(wk->obj_bits);
	free(wk->task_bits);
	free(wk->pieces.mem);
	free(wk->pieces.bits);
	free(wk->pieces.frame_word);
	hr_frame_vars_release(&wk->fv);
	hr_frame_vars_release(&wk->closure_fv);
	memset(wk, 0, sizeof(*wk));
}

void walker_add_counts(struct walker *wk, struct scan_results *res)
{
	res->sum.header_typed += wk->counts.header_typed;
	res->sum.worker_objects += wk->counts.worker_objects;
	wk->counts = (struct walk_counts){ 0 };
}

uint64_t region_word(const struct scan_tables *tb, const struct region *r, uint64_t addr)
{
	if (addr < r->addr || addr - r->addr > r->len || r->len - (addr - r->addr) < tb->ps)
		return 0;
	return hr_dump_word(tb->dump, r->data + (addr - r->addr));
}

bool region_has_ptrs(const struct region *r, uint64_t addr, uint64_t len)
{
	uint64_t end = r->addr + r->len, from, to, ps = r->ps;
	unsigned shift = (unsigned)__builtin_ctz(r->ps); /* 4 or 8: no division */

	if (!r->nwords || addr >= end || addr + len <= r->addr || len == 0)
		return false;
	if (addr < r->addr) {
		len -= r->addr - addr;
		addr = r->addr;
	}
	if (len > end - addr)
		len = end - addr;
	from = (addr - r->addr) >> shift;
	to = (addr - r->addr + len + ps - 1) >> shift;
	if (to > r->nwords)
		to = r->nwords;
	return bits_any(r->bits, from, to);
}

/* --- chain names -------------------------------------------------------------------- */

static const char *type_name(const struct scan_tables *tb, uint32_t id)
{
	const char *n = hr_binary_type(tb->bin, id)->name;

	return n[0] ? n : "?";
}

/* hr_chains_child(), as a worker or while workers read the tree (see pass1_threads.c). */
uint32_t scan_tree_child(struct walker *wk, uint32_t parent, const char *name, size_t len)
{
	uint32_t id;

	if (wk->log)
		return pass1_log_child(wk, parent, name, len);
	if (!wk->res->tree_lock)
		return hr_chains_child(wk->res->tree, parent, name, len);
	/* the workers only read: this thread may, unlocked; a new node waits for their reads */
	id = hr_chains_find(wk->res->tree, parent, name, len);
	if (id != HR_CHAINS_NONE)
		return id;
	pthread_rwlock_wrlock(wk->res->tree_lock);
	id = hr_chains_child(wk->res->tree, parent, name, len);
	pthread_rwlock_unlock(wk->res->tree_lock);
	return id;
}

static uint32_t make_child(struct walker *wk, uint32_t parent, const char *name)
{
	uint32_t id = scan_tree_child(wk, parent, name, strlen(name));

	if (id == HR_CHAINS_NONE) {
		wk->status = HR_ENOMEM;
		return parent;
	}
	return id;
}

#define N_SUB 100 /* cache kind of "$sub_objects$" */

/* The name (kind, a, b, str) of a child, as named_child() makes it, into buf. */
static void format_name(const struct scan_tables *tb, char *buf, size_t len, unsigned kind,
			uint64_t a, uint32_t b, const char *str)
{
	switch (kind) {
	case N_FIELD:
		snprintf(buf, len, "%s. (%s)", hr_binary_member(tb->bin, (uint32_t)a)->name,
			 type_name(tb, b));
		break;
	case N_VAR:
		snprintf(buf, len, "%s. (%s)", str, type_name(tb, b));
		break;
	case N_INDEX:
		if (a < 10)
			snprintf(buf, len, "[%u]. (%s)", (unsigned)a, type_name(tb, b));
		else
			snprintf(buf, len, "[10+]. (%s)", type_name(tb, b));
		break;
	case N_MAPKEY:
		snprintf(buf, len, "$mapkey. (%s)", type_name(tb, b));
		break;
	case N_MAPVAL:
		snprintf(buf, len, "$mapval. (%s)", type_name(tb, b));
		break;
	case N_POOLED:
		snprintf(buf, len, "$pooled. (%s)", type_name(tb, b));
		break;
	case N_CLOSURE:
		snprintf(buf, len, "$closure. (%s)", hr_binary_func(tb->bin, (size_t)a)->name);
		break;
	default:
		snprintf(buf, len, "$sub_objects$");
		break;
	}
}

/*
 * The child of parent for a name (kind, a, b), through a small cache so that the name
 * is formatted and hashed once per distinct chain, not once per object.
 */
static __attribute__((noinline)) uint32_t
named_child_made(struct walker *wk, struct node_cache_entry *e, uint32_t parent, unsigned kind,
		 uint64_t a, uint32_t b, const char *str)
{
	uint32_t child;

	format_name(&wk->tables, wk->name_buf, sizeof(wk->name_buf), kind, a, b, str);
	child = make_child(wk, parent, wk->name_buf);
	*e = (struct node_cache_entry){ .a = a, .parent = parent, .b = b, .child = child,
					.kind = kind, .log_seq = wk->log_seq };
	return child;
}

/* (A cache hit, nearly every call, is inlined: the walk names a child for each claim.) */
static inline __attribute__((always_inline)) uint32_t
named_child(struct walker *wk, uint32_t parent, unsigned kind, uint64_t a, uint32_t b,
	    const char *str)
{
	uint64_t h = ((uint64_t)parent * 0x9E3779B97F4A7C15u) ^ (a * 0xC2B2AE3D27D4EB4Fu) ^
		     ((uint64_t)b << 32 | kind);
	struct node_cache_entry *e = &wk->node_cache[(h ^ (h >> 29)) % NODE_CACHE_SIZE];

	if (e->child && e->parent == parent && e->kind == kind && e->a == a && e->b == b &&
	    (!(e->child & PENDING_NODE) || e->log_seq == wk->log_seq))
		return e->child;
	return named_child_made(wk, e, parent, kind, a, b, str);
}

uint32_t sub_objects_node(struct walker *wk, uint32_t parent)
{
	return named_child(wk, parent, N_SUB, 0, 0, NULL);
}

uint32_t root_node(struct walker *wk, const char *name, size_t len)
{
	uint32_t id = scan_tree_child(wk, HR_CHAINS_TOP, name, len);

	if (id == HR_CHAINS_NONE) {
		wk->status = HR_ENOMEM;
		return HR_CHAINS_TOP;
	}
	return id;
}

/* The node of a value named (name, a, name_type, str) below node parent. */
static uint32_t name_node(struct walker *wk, uint32_t parent, uint8_t name, uint64_t a,
			  uint32_t name_type, const char *str)
{
	switch (name) {
	case N_SAME:
		return parent;
	case N_ROOT:
		return root_node(wk, wk->root_name, wk->root_name_len);
	case N_INDEX:
		a = a < 10 ? a : 10;
		break;
	case N_VAR:
		a = (uint64_t)(uintptr_t)str;
		break;
	default:
		break;
	}
	return named_child(wk, parent, name, a, name_type, str);
}

/* Makes the node of frame j, whose parent's node (if it has a parent) exists. */
static void make_frame_node(struct walker *wk, struct vframe *f)
{
	uint32_t parent = f->parent == NO_FRAME ? HR_CHAINS_TOP : wk->frames[f->parent].node;

	f->node = name_node(wk, parent, f->name, f->a, f->name_type, f->str);
}

uint32_t frame_node(struct walker *wk, uint32_t i)
{
	size_t n = 0;
	uint32_t j;

	if (wk->frames[i].node != HR_CHAINS_NONE) /* nearly always: made once per frame */
		return wk->frames[i].node;

	/* Parents sit below their children on the stack, so the path is at most i long. */
	for (j = i; j != NO_FRAME && wk->frames[j].node == HR_CHAINS_NONE; j = wk->frames[j].parent)
		wk->path[n++] = j;
	while (n > 0)
		make_frame_node(wk, &wk->frames[wk->path[--n]]);
	return wk->frames[i].node;
}

/* --- following pointers ------------------------------------------------------------- */

/*
 * Whom an object a pointer leads to is charged to: the node of frame `frame`; or, for a
 * value the walk reads without a frame of its own (walk_leaf()), the node its frame
 * would have had: named (name, a, name_type) below frame `frame`.
 */
struct charge_to {
	uint32_t frame;
	uint8_t name;       /* N_SAME: the frame's own node */
	uint32_t a;
	uint32_t name_type;
};

static uint32_t charge_node(struct walker *wk, const struct charge_to *c)
{
	uint32_t node = frame_node(wk, c->frame);

	return c->name == N_SAME || wk->status ? node
					      : name_node(wk, node, c->name, c->a, c->name_type, NULL);
}

/* The segment (0 data, 1 bss) of pass 1's regions holding addr, or -1. */
static int static_segment(const struct scan_results *res, uint64_t addr)
{
	for (int k = 0; res->segs && k < 2; k++) {
		const struct region *r = &res->segs[k];

		if (r->nwords && addr >= r->addr && addr - r->addr < r->len)
			return k;
	}
	return -1;
}

/*
 * A typed pointer to value, which is in no heap object. If value is in the data or bss
 * segment but inside no DWARF global, it is an object the compiler allocated statically
 * (`var p = &T{...}`, an inlined constructor's `&Cache{}`): with no variable of its own,
 * it is walked by the pointer's view like a heap object, its chain going on under the
 * pointer's node, once (by the first view to reach it). A pointer to a named global
 * leaves that memory to the global, a root of its own. Static memory is no heap object:
 * nothing is charged for it. Always settled.
 */
static bool follow_static(struct walker *wk, uint64_t value, uint32_t type, uint32_t count,
			  uint8_t mode, uint8_t elem_name, uint32_t aux, const struct charge_to *to)
{
	const struct scan_tables *tb = &wk->tables;
	int k = static_segment(wk->res, value);
	struct static_view v = { .addr = value, .type = type, .aux = aux, .count = count,
				 .mode = mode, .elem_name = elem_name, .seg = (uint8_t)k };
	struct static_view *kept;
	uint64_t len;

	if (k < 0 || !type || count == COUNT_FILL || hr_image_global_at(&tb->img, value))
		return true;
	len = scan_resolved_type(tb, type)->size;
	if (count)
		len = hr_mul_ok(len, count, &len) ? len : UINT64_MAX;
	if (wk->log) { /* a worker: whether a view takes it is known in order only */
		v.node = charge_node(wk, to);
		pass1_log_static(wk, &v, len);
	} else if ((kept = static_accept(wk, &v, len))) {
		kept->node = charge_node(wk, to);
	}
	return true;
}

struct static_view *static_accept(struct walker *wk, const struct static_view *v, uint64_t len)
{
	const struct scan_tables *tb = &wk->tables;
	const struct region *seg = &wk->res->segs[v->seg];
	struct statics *st = &wk->res->statics;
	uint64_t word;
	struct static_view *kept;

	if (!region_has_ptrs(seg, v->addr, len ? len : tb->ps))
		return NULL;
	word = scan_words(tb, v->addr - seg->addr);
	if (hr_bit_get(st->started[v->seg], word))
		return NULL;
	hr_bit_set(st->started[v->seg], word);
	kept = hr_array_push((void **)&st->views, &st->n, &st->cap, sizeof(*kept));
	if (!kept) {
		wk->status = HR_ENOMEM;
		return NULL;
	}
	*kept = *v;
	wk->res->sum.static_objects++;
	return kept;
}

/*
 * Whether address 0 is in neither heap nor data, as in every Go process: a nil word
 * then leads nowhere. (A made-up dump may put an object or a segment there; it is
 * followed as any other word then.) Found once per walker.
 */
static bool nil_leads_nowhere(struct walker *wk)
{
	uint64_t start, size;

	if (wk->nil_nowhere < 0)
		wk->nil_nowhere = hr_dump_object_span_at(wk->tables.dump, 0, &start, &size) < 0 &&
				  static_segment(wk->res, 0) < 0;
	return wk->nil_nowhere;
}

/*
 * Inlined into follow_word_to(), its caller for nearly every word (and follow_value()):
 * pass 1 of small-1m runs 3.9% fewer instructions (callgrind, one thread).
 */
static inline __attribute__((always_inline)) bool
follow_charged(struct walker *wk, uint64_t value, uint32_t type, uint32_t count,
	       uint8_t mode, uint8_t elem_name, uint32_t aux, bool typed,
	       const struct charge_to *to)
{
	const struct scan_tables *tb = &wk->tables;
	const struct scan_ctx *ctx = wk->ctx;
	uint64_t start, size;
	int64_t i;
	uint32_t node;
	struct work w;
	bool pointer_free;

	/* nil, settled as below without the lookup (before empty swiss slots were settled
	 * apart, 12M of the about 43M words small-1g followed) */
	if (!value && nil_leads_nowhere(wk))
		return true;
	i = hr_dump_object_span_at(tb->dump, value, &start, &size);
	if (i < 0)
		return follow_static(wk, value, type, count, mode, elem_name, aux, to);
	/* a root's word: its edge (a worker walks heap objects only: its holder is one) */
	if (wk->holder == HR_SCAN_BY_ROOT && ctx->keep_root_edges)
		scan_root_edge(wk, frame_node(wk, 0), (uint32_t)i);
	if (scan_visited(wk, (uint32_t)i))
		return true;
	if (!type && !typed && mode != M_CLOSURE)
		return false;
	node = charge_node(wk, to);
	if (wk->status)
		return true;
	if (value - start > UINT32_MAX) /* a view deep inside a > 4 GiB object: pass 2 */
		type = 0, mode = M_VALUE, count = 0;
	w = (struct work){ .obj = (uint32_t)i, .node = node, .type = type, .aux = aux,
			   .offset = (uint32_t)(value - start), .count = count, .mode = mode,
			   .elem_name = elem_name, .goroutine = wk->cur_goroutine };
	pointer_free = hr_dump_span_pointer_free(tb->dump, start, size);
	if (wk->log) { /* a worker: whether it is the first to reach it is known in order only */
		pass1_log_claim(wk, &w, size, pointer_free);
		return true;
	}
	scan_claim(wk, w.obj, size, w.node, true);
	scan_queue_view(wk, &w, pointer_free);
	return true;
}

/* The function of the closure at offset of heap object obj: its first word; -1 if none. */
static int64_t closure_func_at(const struct scan_tables *tb, uint32_t obj, uint64_t offset)
{
	struct hr_object o = hr_dump_object(tb->dump, obj);

	if (!o.data || offset > o.size || o.size - offset < tb->ps)
		return -1;
	return hr_image_func_at(&tb->img, hr_dump_word(tb->dump, o.data + offset));
}

void scan_queue_view(struct walker *wk, const struct work *w, bool pointer_free)
{
	if (wk->res->obj_type && w->type && w->type < OBJ_TYPE_STRING_DATA)
		wk->res->obj_type[w->obj] = w->type | (w->count ? OBJ_TYPE_ARRAY : 0);
	else if (wk->res->obj_type && w->mode == M_STRING_DATA)
		wk->res->obj_type[w->obj] = OBJ_TYPE_STRING_DATA;
	else if (wk->res->obj_type && w->mode == M_CLOSURE) {
		int64_t fn = closure_func_at(&wk->tables, w->obj, w->offset);

		if (fn >= 0 && fn < OBJ_TYPE_STRING_DATA)
			wk->res->obj_type[w->obj] = OBJ_TYPE_CLOSURE | (uint32_t)fn;
	}
	/* strings, []byte, structs of numbers: most objects of many heaps; queued, each
	 * would cost a queue item, its prefetches and a copy of its bits, to do nothing */
	if (!pointer_free && scan_enqueue(wk, w))
		wk->status = HR_ENOMEM;
}

static uint64_t elem_size(const struct scan_tables *tb, uint32_t type)
{
	return scan_resolved_type(tb, type)->size;
}

#define PIECE_OBJECT_MIN (64u << 10) /* bytes: a smaller object is one item */
#define PIECE_BYTES (8u << 10)       /* a piece's elements: 1024 pointers */

/*
 * The elements of a piece when w is a long run to walk in pieces (*count: the run's
 * elements, as start_frame() would clip them to the object); else 0. Only runs by value
 * (no map storage), of elements of whole words, in an object of up to 4 GiB (a piece's
 * offset is 32-bit); at least 16 elements a piece, so only the first is named by index.
 */
static uint64_t piece_elements(const struct scan_tables *tb, const struct work *w,
			       uint64_t *count)
{
	struct hr_object o;
	uint64_t es, room;

	if (w->piece || !w->type || !w->count || w->count == COUNT_FILL ||
	    (w->mode != M_VALUE && w->mode != M_INTERNAL))
		return 0;
	o = hr_dump_object(tb->dump, w->obj);
	es = elem_size(tb, w->type);
	if (o.size < PIECE_OBJECT_MIN || o.size > UINT32_MAX || w->offset >= o.size ||
	    w->offset % tb->ps || !es || es % tb->ps || es > PIECE_BYTES / 16)
		return 0;
	room = (o.size - w->offset) / es;
	*count = w->count < room ? w->count : room;
	return *count > PIECE_BYTES / es ? PIECE_BYTES / es : 0;
}

int scan_split_work(const struct scan_tables *tb, const struct work *w,
		    int (*push)(void *ctx, const struct work *w), void *ctx)
{
	uint64_t count, per = piece_elements(tb, w, &count), es;
	struct work p = *w;
	int rc;

	if (!per)
		return push(ctx, w);
	es = elem_size(tb, w->type);
	for (uint64_t k = 0; k < count; k += per) {
		p.offset = (uint32_t)(w->offset + k * es);
		p.count = (uint32_t)(count - k < per ? count - k : per);
		p.piece = (uint8_t)((k ? PIECE_CONT : 0) | (k + per < count ? PIECE_MORE : 0));
		if ((rc = push(ctx, &p)))
			return rc;
	}
	return HR_OK;
}

uint64_t scan_work_bytes(const struct scan_tables *tb, const struct work *w)
{
	return w->piece ? (uint64_t)w->count * elem_size(tb, w->type)
			: hr_dump_object(tb->dump, w->obj).size;
}

bool follow_value(struct walker *wk, uint64_t value, uint32_t type, uint32_t count,
		  uint8_t mode, uint8_t elem_name, uint32_t aux, bool typed, uint32_t frame)
{
	return follow_charged(wk, value, type, count, mode, elem_name, aux, typed,
			      &(struct charge_to){ .frame = frame, .name = N_SAME });
}

/*
 * Whether the word at addr of the walk's region is a pointer word not yet settled: in
 * the region, aligned, its bit set; *bit its bit.
 */
static inline bool region_ptr_word(const struct walker *wk, uint64_t addr, uint64_t *bit)
{
	const struct scan_tables *tb = &wk->tables;
	const struct region *r = wk->region;

	if (addr < r->addr || (addr - r->addr) & (tb->ps - 1) || addr - r->addr >= r->len)
		return false;
	*bit = scan_words(tb, addr - r->addr);
	return *bit < r->nwords && hr_bit_get(r->bits, *bit);
}

/* follow_word() charging to a frame-less value's node (see struct charge_to). */
static void follow_word_to(struct walker *wk, uint64_t addr, uint32_t type, uint64_t count,
			   uint8_t mode, uint8_t elem_name, uint32_t aux, bool typed,
			   const struct charge_to *to)
{
	const struct scan_tables *tb = &wk->tables;
	struct region *r = wk->region;
	uint64_t w;

	if (!region_ptr_word(wk, addr, &w))
		return;
	if (count >= COUNT_FILL)
		count = COUNT_FILL;
	/* read without region_word()'s checks: a word whose bit is set lies whole in the
	 * region (its nwords words all do) */
	if (follow_charged(wk, hr_dump_word(tb->dump, r->data + (addr - r->addr)), type,
			   (uint32_t)count, mode, elem_name, aux, typed, to))
		hr_bit_clear(r->bits, w);
}

/*
 * The func value at addr of the walk's region (frame i): the closure it points to,
 * charged to a child of i's node named after the closure's function ("$closure.
 * (main.schedule.func1)") when it is a heap object, its captured variables below it.
 */
static void follow_closure(struct walker *wk, uint64_t addr, uint32_t i)
{
	const struct scan_tables *tb = &wk->tables;
	const struct region *r = wk->region;
	struct charge_to to = { .frame = i, .name = N_SAME };
	uint64_t start, size, value;
	int64_t obj, fn = -1;

	if (addr >= r->addr && addr - r->addr < r->len) {
		value = region_word(tb, r, addr);
		obj = hr_dump_object_span_at(tb->dump, value, &start, &size);
		if (obj >= 0 && !scan_visited(wk, (uint32_t)obj))
			fn = closure_func_at(tb, (uint32_t)obj, value - start);
	}
	if (fn >= 0) {
		to.name = N_CLOSURE;
		to.a = (uint32_t)fn;
	}
	follow_word_to(wk, addr, 0, 0, M_CLOSURE, N_SAME, 0, true, &to);
}

/* Follows the pointer word at addr of r if the bitmap still has it; ticks it if settled. */
void follow_word(struct walker *wk, uint64_t addr, uint32_t type, uint64_t count,
		 uint8_t mode, uint8_t elem_name, uint32_t aux, bool typed, uint32_t frame)
{
	follow_word_to(wk, addr, type, count, mode, elem_name, aux, typed,
		       &(struct charge_to){ .frame = frame, .name = N_SAME });
}

/* --- the walk ----------------------------------------------------------------------- */

/* A new frame on top of the stack, its fields unset; NULL (status set) when out of memory. */
static struct vframe *new_frame(struct walker *wk)
{
	if (wk->nframes == wk->frames_cap) {
		size_t cap = wk->frames_cap;

		if (hr_array_reserve((void **)&wk->frames, &cap, wk->nframes + 1,
				     sizeof(*wk->frames)) ||
		    hr_array_reserve((void **)&wk->path, &wk->frames_cap, cap, sizeof(*wk->path))) {
			wk->status = HR_ENOMEM;
			return NULL;
		}
	}
	return &wk->frames[wk->nframes++];
}

static int push_frame(struct walker *wk, const struct vframe *f)
{
	struct vframe *top = new_frame(wk);

	if (!top)
		return wk->status;
	*top = *f;
	return HR_OK;
}

/*
 * Fills a new frame field by field. (Copying a struct built on the stack field by field
 * costs a store-forwarding stall per 16 bytes read back: this is the walk's busiest store.)
 */
static struct vframe *push_value(struct walker *wk, uint64_t addr, uint64_t count, uint32_t type,
				 uint32_t aux, uint32_t parent, uint32_t node, uint8_t name,
				 uint8_t mode, uint8_t elem_name)
{
	struct vframe *f = new_frame(wk);

	if (!f)
		return NULL;
	f->addr = addr;
	f->count = count;
	f->next = 0;
	f->str = NULL;
	f->type = type;
	f->aux = aux;
	f->parent = parent;
	f->node = node;
	f->a = 0;
	f->name_type = 0;
	f->name = name;
	f->mode = mode;
	f->elem_name = elem_name;
	f->started = 0;
	f->has_ptrs = 0;
	return f;
}

bool follow_root_value(struct walker *wk, uint64_t value, uint32_t type, uint8_t mode)
{
	bool settled = true;

	wk->nframes = 0;
	if (!push_frame(wk, &(struct vframe){ .parent = NO_FRAME, .node = HR_CHAINS_NONE,
					     .name = N_ROOT }))
		settled = follow_value(wk, value, type, 0, mode, N_SAME, 0, true, 0);
	wk->nframes = 0;
	return settled;
}

/* Pushes a frame for a value inside frame parent; returns it, or NULL (out of memory). */
struct vframe *push_child(struct walker *wk, uint32_t parent, uint64_t addr, uint32_t type,
			  uint8_t mode, uint8_t name, uint64_t a, uint32_t name_type,
			  uint32_t aux)
{
	/* a child named as its parent has the parent's node, as soon as that exists */
	uint32_t node = name == N_SAME ? wk->frames[parent].node : HR_CHAINS_NONE;
	struct vframe *f = push_value(wk, addr, 0, type, aux, parent, node, name, mode, 0);

	if (f) {
		f->a = (uint32_t)a;
		f->name_type = name_type;
	}
	return f;
}

/* Modes whose values are storage: charged to the node above, elements not named. */
static bool storage_mode(uint8_t mode)
{
	return mode == M_INTERNAL || mode == M_SYNC || mode == M_TRIE || mode == M_POOL;
}

static uint8_t child_mode(const struct vframe *f)
{
	return storage_mode(f->mode) ? f->mode : M_VALUE;
}

/* The key or element type of the map type a map-storage frame carries in aux. */
static uint32_t map_part(const struct scan_tables *tb, uint32_t map_type, bool key)
{
	const struct hr_type *t = hr_binary_type(tb->bin, map_type);

	return key ? t->key : t->elem;
}

/*
 * Whether a map's values are a Go <= 1.23 sync.Map's *entry: its storage, the values
 * behind them named $mapval (sync_layouts.c).
 */
static bool map_values_are_sync(const struct scan_tables *tb, uint32_t map_type)
{
	return scan_type_layout(tb, map_part(tb, map_type, false)) == SL_ENTRY_REF;
}

/* A bucket map's header hash<K,V>, or a swiss map's map<K,V>. */
static void walk_map_header(struct walker *wk, uint32_t i)
{
	const struct scan_tables *tb = &wk->tables;
	struct vframe f = wk->frames[i];
	const struct hr_member *m;

	if ((m = layout_member(tb->bin, f.type, "buckets"))) {
		uint32_t bucket = layout_pointee(tb->bin, m->type);
		const struct hr_member *extra = layout_member(tb->bin, f.type, "extra");

		follow_word(wk, f.addr + m->offset, bucket, COUNT_FILL, M_MAP_STORAGE, N_SAME,
			    f.aux, true, i);
		if ((m = layout_member(tb->bin, f.type, "oldbuckets")))
			follow_word(wk, f.addr + m->offset, bucket, COUNT_FILL, M_MAP_STORAGE,
				    N_SAME, f.aux, true, i);
		if (extra)
			follow_word(wk, f.addr + extra->offset, layout_pointee(tb->bin, extra->type), 0,
				    M_INTERNAL, N_SAME, f.aux, true, i);
	} else if ((m = layout_member(tb->bin, f.type, "dirPtr"))) {
		const struct hr_member *len = layout_member(tb->bin, f.type, "dirLen");
		uint32_t table_ptr = layout_pointee(tb->bin, m->type);
		uint32_t table = layout_pointee(tb->bin, table_ptr);
		const struct hr_member *groups = layout_member(tb->bin, table, "groups");
		const struct hr_member *data =
			groups ? layout_member(tb->bin, groups->type, "data") : NULL;
		uint64_t dir_len = len ? region_word(tb, wk->region, f.addr + len->offset) : 0;

		if (dir_len == 0 && data) /* a small map: dirPtr is its one group */
			follow_word(wk, f.addr + m->offset, layout_pointee(tb->bin, data->type), 0,
				    M_MAP_STORAGE, N_SAME, f.aux, true, i);
		else if (dir_len)
			follow_word(wk, f.addr + m->offset, table_ptr, dir_len, M_MAP_DIR, N_SAME,
				    f.aux, true, i);
	}
}

/* A swiss table<K,V>: its groups, lengthMask + 1 of them (all the object holds). */
static void walk_map_table(struct walker *wk, uint32_t i)
{
	const struct scan_tables *tb = &wk->tables;
	struct vframe f = wk->frames[i];
	const struct hr_member *groups = layout_member(tb->bin, f.type, "groups");
	const struct hr_member *data = groups ? layout_member(tb->bin, groups->type, "data") : NULL;

	if (data)
		follow_word(wk, f.addr + groups->offset + data->offset,
			    layout_pointee(tb->bin, data->type), COUNT_FILL, M_MAP_STORAGE, N_SAME,
			    f.aux, true, i);
}

/* An hchan<T>: its buffer as [dataqsiz]T, elements named by slot; the rest is internal. */
static void walk_chan(struct walker *wk, uint32_t i)
{
	const struct scan_tables *tb = &wk->tables;
	struct vframe f = wk->frames[i];
	const struct hr_member *buf = layout_member(tb->bin, f.type, "buf");
	const struct hr_member *size = layout_member(tb->bin, f.type, "dataqsiz");
	uint64_t n = size ? region_word(tb, wk->region, f.addr + size->offset) : 0;

	if (buf && n)
		follow_word(wk, f.addr + buf->offset, hr_binary_type(tb->bin, f.aux)->elem, n,
			    M_VALUE, N_INDEX, 0, true, i);
	wk->frames[i].mode = M_INTERNAL;
}

/*
 * A closure: captured variables at the offsets DWARF gives (Go >= 1.23). A function whose
 * variables cannot be read (DWARF heapref does not read) leaves its closures' words to
 * pass 2; running out of memory fails the walk (the names would change silently).
 */
static void walk_closure(struct walker *wk, uint32_t i)
{
	const struct scan_tables *tb = &wk->tables;
	struct vframe f = wk->frames[i];
	int64_t fn = hr_image_func_at(&tb->img, region_word(tb, wk->region, f.addr));
	struct hr_error err = { 0 };
	struct hr_frame_vars *fv = &wk->closure_fv;
	int rc;

	wk->frames[i].mode = M_DONE;
	if (fn < 0)
		return;
	/* the binary reads a function's variables the first time, under a lock of its own */
	rc = hr_binary_func_vars(tb->bin, (size_t)fn, hr_binary_func(tb->bin, (size_t)fn)->low_pc,
				 fv, &err);
	if (walker_fail_on_nomem(wk, rc))
		return;
	for (size_t k = fv->count; k-- > 0;) {
		const struct hr_var *v = &fv->vars[k];

		if (!v->has_closure_offset)
			continue;
		push_frame(wk, &(struct vframe){ .addr = f.addr + v->closure_offset, .type = v->type,
						.str = v->name, .parent = i,
						.node = HR_CHAINS_NONE, .name_type = v->type,
						.name = N_VAR, .mode = M_VALUE });
	}
}

/* An interface: its dynamic type names it; the data word is that value or points to it. */
void walk_iface(struct walker *wk, uint32_t i)
{
	const struct scan_tables *tb = &wk->tables;
	const struct scan_ctx *ctx = wk->ctx;
	struct vframe *f = &wk->frames[i];
	uint32_t dyn = layout_iface_dynamic(wk, wk->region, f->addr, f->type);
	uint8_t mode = child_mode(f);

	/* the type word leads nowhere in the heap, save for types made by reflect */
	follow_word(wk, f->addr, 0, 0, M_VALUE, N_SAME, 0, false, i);
	if (!dyn)
		return;
	if (f->name != N_SAME && f->name != N_ROOT)
		f->name_type = dyn;
	f->mode = M_DONE;
	if (layout_direct_iface(tb->bin, dyn, tb->ps, ctx->go_minor))
		push_child(wk, i, f->addr + tb->ps, dyn, mode, N_SAME, 0, 0, 0);
	else
		follow_word(wk, f->addr + tb->ps, dyn, 0, mode, N_SAME, 0, true, i);
}

static void walk_unsafe_pointer(struct walker *wk, uint32_t i)
{
	const struct scan_tables *tb = &wk->tables;
	const struct scan_ctx *ctx = wk->ctx;
	struct vframe f = wk->frames[i];
	uint32_t type = layout_header_type(ctx, region_word(tb, wk->region, f.addr));

	if (type) { /* typed by its malloc header; else left to pass 2 */
		wk->counts.header_typed++;
		follow_word(wk, f.addr, type, 0, child_mode(&f), N_SAME, 0, true, i);
	}
}

static bool walk_leaf(struct walker *wk, uint32_t parent, uint64_t addr, uint32_t type,
		      uint8_t mode, uint8_t name, uint64_t a, uint32_t name_type);

/*
 * A flat struct (struct scan_type: flat_ifaces) at frame i, member by member as
 * next_member() would go, without the frame staying on the stack as a cursor: walk_leaf()
 * does what each member's push_known() would do, and checks its word's bit. Returns true
 * when a member needs a frame of its own (an interface holding a value in its data word
 * that is no plain pointer): frame i is then left as start_frame() leaves a struct's
 * cursor, next_member() to go on from that member.
 */
static bool walk_flat_struct(struct walker *wk, uint32_t i, uint32_t id)
{
	const struct scan_tables *tb = &wk->tables;
	const struct hr_type *t = scan_resolved_type(tb, id);
	uint64_t addr = wk->frames[i].addr;

	for (uint32_t k = 0; k < t->member_count && !wk->status; k++) {
		uint32_t index = t->first_member + k;
		const struct hr_member *m = hr_binary_member(tb->bin, index);

		if (!scan_type_inert(tb, m->type) &&
		    !walk_leaf(wk, i, addr + m->offset, m->type, M_VALUE, N_FIELD, index, m->type)) {
			wk->frames[i].type = id;
			wk->frames[i].next = k;
			return true;
		}
	}
	return false;
}

/*
 * Starts frame i. Returns true when it stays on the stack as a cursor (a struct, an
 * array, or a frame whose children it pushed), false when it is done.
 */
static bool start_frame(struct walker *wk, uint32_t i)
{
	const struct scan_tables *tb = &wk->tables;
	struct vframe *f = &wk->frames[i];
	uint32_t id = scan_resolve(tb, f->type);
	const struct hr_type *t = scan_resolved_type(tb, f->type);
	uint8_t mode = child_mode(f);

	if (f->count) {
		uint64_t es = elem_size(tb, f->type), room;

		if (!es || f->addr < wk->region->addr ||
		    f->addr - wk->region->addr >= wk->region->len)
			return false;
		room = (wk->region->len - (f->addr - wk->region->addr)) / es;
		if (f->count > room)
			f->count = room;
		return f->count && region_has_ptrs(wk->region, f->addr, f->count * es);
	}
	if (f->mode == M_CLOSURE) {
		walk_closure(wk, i);
		return true;
	}
	if (scan_type_layout(tb, f->type)) {
		enum sync_start next = sync_start_frame(wk, i);

		if (next != SYNC_GO_ON)
			return next == SYNC_KEEP;
		f = &wk->frames[i];
		id = scan_resolve(tb, f->type);
		t = scan_resolved_type(tb, f->type);
		mode = child_mode(f);
	}
	if (!f->has_ptrs && !region_has_ptrs(wk->region, f->addr, t->size ? t->size : tb->ps))
		return false;
	switch (f->mode) {
	case M_MAP:
		walk_map_header(wk, i);
		return false;
	case M_MAP_TABLE:
		walk_map_table(wk, i);
		return false;
	case M_MAP_DIR:
		follow_word(wk, f->addr, layout_pointee(tb->bin, f->type), 0, M_MAP_TABLE, N_SAME,
			    f->aux, true, i);
		return false;
	case M_CHAN:
		walk_chan(wk, i);
		f = &wk->frames[i];
		break;
	default:
		break;
	}
	switch (t->kind) {
	case HR_KIND_PTR:
		follow_word(wk, f->addr, t->target, 0, mode, N_SAME, 0, t->target != 0, i);
		return false;
	case HR_KIND_UNSAFE_POINTER:
		walk_unsafe_pointer(wk, i);
		return false;
	case HR_KIND_STRING:
		follow_word(wk, f->addr, 0, 0, M_STRING_DATA, N_SAME, 0, true, i);
		return false;
	case HR_KIND_SLICE: {
		uint64_t cap = region_word(tb, wk->region, f->addr + 2 * tb->ps);

		follow_word(wk, f->addr, cap ? t->elem : 0, cap, mode,
			    storage_mode(mode) ? N_SAME : N_INDEX, 0, true, i);
		return false;
	}
	case HR_KIND_INTERFACE:
		walk_iface(wk, i);
		return wk->frames[i].mode == M_DONE;
	case HR_KIND_MAP:
		follow_word(wk, f->addr, layout_pointee(tb->bin, t->target), 0, M_MAP, N_SAME, id,
			    true, i);
		return false;
	case HR_KIND_CHAN:
		follow_word(wk, f->addr, layout_pointee(tb->bin, t->target), 0, M_CHAN, N_SAME, id,
			    true, i);
		return false;
	case HR_KIND_FUNC:
		follow_closure(wk, f->addr, i);
		return false;
	default:
		break;
	}
	if (f->mode == M_VALUE && scan_type_flat_ifaces(tb, id)) /* (flat types are structs) */
		return walk_flat_struct(wk, i, id);
	if (t->shape == HR_SHAPE_STRUCT) {
		f->type = id;
		f->next = 0;
		return true;
	}
	if (t->shape == HR_SHAPE_ARRAY && t->count && t->elem) {
		/* an array becomes a run of elements, named by index or as map keys/values */
		f->elem_name = f->mode == M_MAP_KEYS ? N_MAPKEY
			     : f->mode == M_MAP_VALS ? N_MAPVAL
			     : f->mode == M_MAP_SLOTS || storage_mode(f->mode) ? N_SAME : N_INDEX;
		f->mode = f->mode == M_MAP_SLOTS ? M_MAP_SLOT : mode;
		if (f->elem_name == N_MAPVAL && map_values_are_sync(tb, f->aux)) {
			f->elem_name = N_SAME;
			f->mode = M_SYNC;
		}
		f->type = t->elem;
		f->count = t->count;
		f->next = 0;
		return true;
	}
	return false;
}

/*
 * An interface value at addr that walk_leaf() was given: walked as walk_iface() walks a
 * frame of it, without the frame, when its data word points to the value (or is a
 * pointer): named after its dynamic type as the frame would be. False when the value
 * needs a frame of its own (one stored in the data word that is no plain pointer, or an
 * interface type walked by a layout of its own), before anything is followed.
 */
static bool walk_leaf_iface(struct walker *wk, uint64_t addr, uint32_t type, uint8_t mode,
			    const struct charge_to *to)
{
	const struct scan_tables *tb = &wk->tables;
	struct charge_to data_to = *to;
	uint32_t dyn, target = 0;
	bool direct;

	if (scan_type_layout(tb, type))
		return false;
	if (!region_has_ptrs(wk->region, addr, 2 * tb->ps))
		return true; /* as next_member() skips a member without a pointer word */
	dyn = layout_iface_dynamic(wk, wk->region, addr, type);
	direct = dyn && layout_direct_iface(tb->bin, dyn, tb->ps, wk->ctx->go_minor);
	if (direct) { /* a pointer in the data word: start_frame() of a frame of dyn */
		const struct hr_type *t = scan_resolved_type(tb, dyn);

		if (t->kind != HR_KIND_PTR || scan_type_layout(tb, dyn))
			return false;
		target = t->target;
	}
	/* the type word leads nowhere in the heap, save for types made by reflect */
	follow_word_to(wk, addr, 0, 0, M_VALUE, N_SAME, 0, false, to);
	if (!dyn)
		return true;
	if (to->name != N_SAME && to->name != N_ROOT)
		data_to.name_type = dyn;
	if (direct)
		follow_word_to(wk, addr + tb->ps, target, 0, mode, N_SAME, 0, target != 0,
			       &data_to);
	else
		follow_word_to(wk, addr + tb->ps, dyn, 0, mode, N_SAME, 0, true, &data_to);
	return true;
}

/*
 * The value at addr of `type`, a child of frame `parent` that holds a pointer word and
 * would be named (name, a, name_type): when its kind is a pointer, string, slice, map
 * or channel, walked as start_frame() would walk a frame of it, without pushing one (a
 * func gets a frame: its closure is named below it). Most values the walk meets are such. False for other kinds and modes: the caller
 * pushes a frame.
 */
static bool walk_leaf(struct walker *wk, uint32_t parent, uint64_t addr, uint32_t type,
		      uint8_t mode, uint8_t name, uint64_t a, uint32_t name_type)
{
	const struct scan_tables *tb = &wk->tables;
	const struct hr_type *t = scan_resolved_type(tb, type);
	const struct charge_to to = { parent, name, (uint32_t)a, name_type };
	uint64_t cap;

	if (mode != M_VALUE && mode != M_INTERNAL)
		return false;
	switch (t->kind) { /* (the one-word kinds: see slot_nil_plan()) */
	case HR_KIND_PTR:
		follow_word_to(wk, addr, t->target, 0, mode, N_SAME, 0, t->target != 0, &to);
		return true;
	case HR_KIND_STRING:
		follow_word_to(wk, addr, 0, 0, M_STRING_DATA, N_SAME, 0, true, &to);
		return true;
	case HR_KIND_SLICE:
		cap = region_word(tb, wk->region, addr + 2 * tb->ps);
		follow_word_to(wk, addr, cap ? t->elem : 0, cap, mode,
			       mode == M_INTERNAL ? N_SAME : N_INDEX, 0, true, &to);
		return true;
	case HR_KIND_MAP:
		follow_word_to(wk, addr, layout_pointee(tb->bin, t->target), 0, M_MAP, N_SAME,
			       scan_resolve(tb, type), true, &to);
		return true;
	case HR_KIND_CHAN:
		follow_word_to(wk, addr, layout_pointee(tb->bin, t->target), 0, M_CHAN, N_SAME,
			       scan_resolve(tb, type), true, &to);
		return true;
	case HR_KIND_INTERFACE:
		return walk_leaf_iface(wk, addr, type, mode, &to);
	case HR_KIND_FUNC: /* a frame of its own: its closure is named below it */
		return false;
	default:
		return false;
	}
}

/*
 * A child of frame parent that holds a pointer word: walked at once by walk_leaf(), or
 * pushed, marked as holding one.
 */
void push_known(struct walker *wk, uint32_t parent, uint64_t addr, uint32_t type,
		uint8_t mode, uint8_t name, uint64_t a, uint32_t name_type, uint32_t aux)
{
	struct vframe *child;

	if (walk_leaf(wk, parent, addr, type, mode, name, a, name_type))
		return;
	child = push_child(wk, parent, addr, type, mode, name, a, name_type, aux);
	if (child)
		child->has_ptrs = 1;
}

/*
 * Whether a swiss map slot {key K; elem V} of type slot (of the map type aux) can be
 * walked in place (walk_slot_members()): flat (keys and values of pointers, strings,
 * slices or numbers: most maps), its values no sync.Map entries.
 */
static bool slot_in_place(const struct scan_tables *tb, uint32_t slot, uint32_t aux)
{
	return scan_type_flat(tb, scan_resolve(tb, slot)) && !map_values_are_sync(tb, aux);
}

/*
 * The key and value of the slot at addr, its type one slot_in_place() took, walked as a
 * frame of it would walk them (next_member(), M_MAP_SLOT) without pushing one. That
 * frame would be named as frame i (N_SAME), so they are named below i.
 */
static void walk_slot_members(struct walker *wk, uint32_t i, uint64_t addr, uint32_t slot,
			      uint32_t aux)
{
	const struct scan_tables *tb = &wk->tables;
	const struct hr_type *t = scan_resolved_type(tb, slot);

	for (uint32_t k = 0; k < t->member_count && !wk->status; k++) {
		uint32_t index = t->first_member + k;
		const struct hr_member *m = hr_binary_member(tb->bin, index);
		unsigned role = scan_member_role(tb, index);

		if (scan_type_inert(tb, m->type) || (role != ROLE_KEY && role != ROLE_ELEM))
			continue;
		walk_leaf(wk, i, addr + m->offset, m->type, M_VALUE,
			  role == ROLE_KEY ? N_MAPKEY : N_MAPVAL, 0,
			  map_part(tb, aux, role == ROLE_KEY));
	}
}

#define NIL_PLAN_MAX 4 /* words */

/*
 * The offsets in a slot of the words walk_slot_members() follows, when each member it
 * walks is one such word (a pointer, string, slice, map or channel: the kinds walk_leaf()
 * follows as one word, kept in step with it): their count. 0 when some member is not
 * (an interface, whose nil data word the walk leaves), when there are more than
 * NIL_PLAN_MAX, or none.
 */
static unsigned slot_nil_plan(const struct scan_tables *tb, uint32_t slot,
			      uint64_t offsets[NIL_PLAN_MAX])
{
	const struct hr_type *t = scan_resolved_type(tb, slot);
	unsigned n = 0;

	for (uint32_t k = 0; k < t->member_count; k++) {
		uint32_t index = t->first_member + k;
		const struct hr_member *m = hr_binary_member(tb->bin, index);
		unsigned role = scan_member_role(tb, index);

		if (scan_type_inert(tb, m->type) || (role != ROLE_KEY && role != ROLE_ELEM))
			continue;
		switch (scan_resolved_type(tb, m->type)->kind) {
		case HR_KIND_PTR:
		case HR_KIND_STRING:
		case HR_KIND_SLICE:
		case HR_KIND_MAP:
		case HR_KIND_CHAN:
			if (n == NIL_PLAN_MAX)
				return 0;
			offsets[n++] = m->offset;
			break;
		default:
			return 0;
		}
	}
	return n;
}

/*
 * Whether follow_word_to() would at most tick the word at addr: a nil pointer word
 * (*bit its bit), or no pointer word to follow (*bit UINT64_MAX).
 */
static bool word_is_nil(struct walker *wk, uint64_t addr, uint64_t *bit)
{
	if (!region_ptr_word(wk, addr, bit)) {
		*bit = UINT64_MAX;
		return true;
	}
	return region_word(&wk->tables, wk->region, addr) == 0 && nil_leads_nowhere(wk);
}

/*
 * An empty slot (all the words its walk follows nil: a swiss table is up to 7/8 full)
 * settled as walk_slot_members() would, without it: its words ticked. False, having
 * done nothing, if it is not one.
 */
static bool settle_nil_slot(struct walker *wk, uint64_t addr, const uint64_t *offsets,
			    unsigned n)
{
	uint64_t bits[NIL_PLAN_MAX];

	for (unsigned j = 0; j < n; j++)
		if (!word_is_nil(wk, addr + offsets[j], &bits[j]))
			return false;
	for (unsigned j = 0; j < n; j++)
		if (bits[j] != UINT64_MAX)
			hr_bit_clear(wk->region->bits, bits[j]);
	return true;
}

/*
 * Group addr of run i, a swiss table's groups {ctrl; slots [8]slot}, walked in place
 * when its slots can be (slot_in_place()): slot by slot, as the frames of the group, of
 * its slots and of each slot would (all named as i: N_SAME). False for other storage
 * (a bucket map's), before anything is walked: the caller pushes the group's frame.
 */
static bool walk_group_in_place(struct walker *wk, uint32_t i, uint64_t addr)
{
	const struct scan_tables *tb = &wk->tables;
	uint32_t group = wk->frames[i].type, aux = wk->frames[i].aux, slots = 0;
	const struct hr_type *t = scan_resolved_type(tb, group), *run;
	uint64_t offset = 0, nil_offsets[NIL_PLAN_MAX];
	unsigned nil_words;

	if (scan_type_layout(tb, group) || t->shape != HR_SHAPE_STRUCT)
		return false;
	for (uint32_t k = 0; k < t->member_count; k++) {
		const struct hr_member *m = hr_binary_member(tb->bin, t->first_member + k);
		unsigned role = scan_member_role(tb, t->first_member + k);

		if (role == ROLE_SLOTS && !slots) {
			slots = m->type;
			offset = m->offset;
		} else if (role != ROLE_OTHER) {
			return false;
		}
	}
	run = scan_resolved_type(tb, slots);
	if (!slots || scan_type_layout(tb, slots) || run->shape != HR_SHAPE_ARRAY ||
	    !run->elem || !slot_in_place(tb, run->elem, aux))
		return false;
	nil_words = slot_nil_plan(tb, run->elem, nil_offsets);
	for (uint64_t k = 0; k < run->count && !wk->status; k++) {
		uint64_t slot = addr + offset + k * elem_size(tb, run->elem);

		if (!nil_words || !settle_nil_slot(wk, slot, nil_offsets, nil_words))
			walk_slot_members(wk, i, slot, scan_resolve(tb, run->elem), aux);
	}
	return true;
}

#define ELEMENTS_AHEAD 512 /* bytes */

/* Whether run f's elements are plain pointers, each one word that walk_leaf() follows. */
static bool pointer_run(const struct scan_tables *tb, const struct vframe *f)
{
	return (f->mode == M_VALUE || f->mode == M_INTERNAL) &&
	       scan_resolved_type(tb, f->type)->kind == HR_KIND_PTR;
}

/*
 * The pointer elements of run i from its word w on, up to word to of the region (their
 * bits set), followed one after the other as next_element() would push_known() each:
 * a []*T of millions is one call, not one return to walk_value()'s loop per element.
 */
static void walk_pointer_run(struct walker *wk, uint32_t i, uint64_t w, uint64_t to,
			     uint32_t name_type)
{
	const struct scan_tables *tb = &wk->tables;
	const struct region *r = wk->region;
	uint64_t first = scan_words(tb, wk->frames[i].addr - r->addr), at;
	uint64_t base = i ? 0 : wk->index_base;

	for (; w < to && !wk->status; w = hr_bit_next(r->bits, w + 1, to)) {
		const struct vframe *f = &wk->frames[i]; /* the walk may move the stack */

		at = w * tb->ps;
		if (at + ELEMENTS_AHEAD < r->len)
			__builtin_prefetch(r->data + at + ELEMENTS_AHEAD);
		walk_leaf(wk, i, r->addr + at, f->type, f->mode, f->elem_name, w - first + base,
			  name_type);
	}
	wk->frames[i].next = wk->frames[i].count;
}

/* Pushes the next element of run i that still holds pointer words; false when none. */
static bool next_element(struct walker *wk, uint32_t i)
{
	const struct scan_tables *tb = &wk->tables;
	struct vframe *f = &wk->frames[i];
	struct region *r = wk->region;
	uint64_t es = elem_size(tb, f->type), from, to, w, at, k, index, name_type = f->type;

	if (f->next >= f->count)
		return false;
	from = scan_words(tb, f->addr + f->next * es - r->addr);
	to = scan_words(tb, f->addr + f->count * es - r->addr + tb->ps - 1);
	if (to > r->nwords)
		to = r->nwords;
	w = hr_bit_next(r->bits, from, to);
	if (w >= to)
		return false;
	at = r->addr + w * tb->ps;
	k = at <= f->addr ? 0 : (at - f->addr) / es;
	if (k < f->next) /* the word straddles into the previous element */
		k = f->next;
	if (k >= f->count)
		return false;
	f->next = k + 1;
	/* a long run is read in order, while its elements lead all over the heap: keep the
	 * next lines coming (the queue prefetched only the start of the object) */
	if (at - r->addr + ELEMENTS_AHEAD < r->len)
		__builtin_prefetch(r->data + (at - r->addr) + ELEMENTS_AHEAD);
	if ((f->elem_name == N_MAPKEY || f->elem_name == N_MAPVAL) && f->aux)
		name_type = map_part(tb, f->aux, f->elem_name == N_MAPKEY);
	index = k + (i ? 0 : wk->index_base);
	if (at >= f->addr + k * es) { /* the word found lies in it */
		if (es == tb->ps && !((f->addr - r->addr) % tb->ps) && pointer_run(tb, f)) {
			walk_pointer_run(wk, i, w, to, (uint32_t)name_type);
			return true;
		}
		if (f->mode == M_MAP_SLOT && slot_in_place(tb, f->type, f->aux)) {
			walk_slot_members(wk, i, f->addr + k * es, scan_resolve(tb, f->type), f->aux);
			return true;
		}
		if (f->mode == M_MAP_STORAGE && walk_group_in_place(wk, i, f->addr + k * es))
			return true;
		push_known(wk, i, f->addr + k * es, f->type, f->mode, f->elem_name, index,
			   (uint32_t)name_type, f->aux);
		return true;
	}
	push_child(wk, i, f->addr + k * es, f->type, f->mode, f->elem_name, index,
		   (uint32_t)name_type, f->aux);
	return true;
}

/* Whether member m of the struct at addr has no pointer word: its frame would do nothing. */
static bool member_is_empty(const struct walker *wk, const struct hr_member *m, uint64_t addr)
{
	const struct scan_tables *tb = &wk->tables;
	uint64_t size = scan_resolved_type(tb, m->type)->size;

	return !region_has_ptrs(wk->region, addr + m->offset, size ? size : tb->ps);
}

/* Pushes the next member of struct frame i (or follows it directly); false when done. */
static bool next_member(struct walker *wk, uint32_t i)
{
	const struct scan_tables *tb = &wk->tables;
	struct vframe *f = &wk->frames[i];
	const struct hr_type *t = scan_resolved_type(tb, f->type);
	const struct hr_member *m;
	uint32_t type, aux = f->aux, index;
	uint64_t addr;
	unsigned role;

	/* Members that cannot lead anywhere are skipped here rather than pushed and popped:
	 * inert ones (by their type; map storage reads some members by name instead) and
	 * ones without a pointer word. */
	bool skip_inert = f->mode != M_MAP_STORAGE;

	do {
		if (f->next >= t->member_count)
			return false;
		index = t->first_member + (uint32_t)f->next++;
		m = hr_binary_member(tb->bin, index);
	} while ((skip_inert && scan_type_inert(tb, m->type)) || member_is_empty(wk, m, f->addr));
	addr = f->addr + m->offset;
	type = m->type;
	role = scan_member_role(tb, index);
	/* the member's own type holds a pointer word (member_is_empty()): push_known() */
	switch (f->mode) {
	case M_INTERNAL:
		push_known(wk, i, addr, type, M_INTERNAL, N_SAME, 0, 0, aux);
		break;
	case M_MAP_STORAGE: /* bucket<K,V>{tophash, keys, values, overflow}, group{ctrl, slots} */
		if (role == ROLE_KEYS)
			push_known(wk, i, addr, type, M_MAP_KEYS, N_SAME, 0, 0, aux);
		else if (role == ROLE_VALUES)
			push_known(wk, i, addr, type, M_MAP_VALS, N_SAME, 0, 0, aux);
		else if (role == ROLE_SLOTS)
			push_known(wk, i, addr, type, M_MAP_SLOTS, N_SAME, 0, 0, aux);
		else if (role == ROLE_OVERFLOW)
			follow_word(wk, addr, layout_pointee(tb->bin, type), 0, M_MAP_STORAGE, N_SAME,
				    aux, true, i);
		break;
	case M_MAP_SLOT: /* struct { key K; elem V } */
		if (role == ROLE_KEY)
			push_known(wk, i, addr, type, M_VALUE, N_MAPKEY, 0, map_part(tb, aux, true), 0);
		else if (role == ROLE_ELEM && map_values_are_sync(tb, aux))
			push_known(wk, i, addr, type, M_SYNC, N_SAME, 0, 0, 0);
		else if (role == ROLE_ELEM)
			push_known(wk, i, addr, type, M_VALUE, N_MAPVAL, 0, map_part(tb, aux, false),
				   0);
		break;
	case M_SYNC:
	case M_TRIE:
	case M_POOL:
		sync_next_member(wk, i, index);
		break;
	default:
		if (role == ROLE_V && layout_atomic_pointer(tb->bin, f->type)) {
			type = layout_atomic_pointer(tb->bin, f->type);
			push_child(wk, i, addr, type, M_VALUE, N_FIELD, index, type, 0);
			break; /* another type: its own size decides */
		}
		push_known(wk, i, addr, type, M_VALUE, N_FIELD, index, type, 0);
		break;
	}
	return true;
}

static bool next_child(struct walker *wk, uint32_t i)
{
	const struct vframe *f = &wk->frames[i];

	if (f->mode == M_DONE)
		return false;
	if (f->count)
		return next_element(wk, i);
	return next_member(wk, i);
}

int walk_value(struct walker *wk, struct region *r, uint64_t addr, uint32_t type,
	       uint64_t count, uint8_t mode, uint8_t elem_name, uint32_t aux,
	       uint8_t name, uint32_t node)
{
	const struct scan_tables *tb = &wk->tables;
	uint32_t id = scan_resolve(tb, type);

	wk->region = r;
	wk->nframes = 0;
	if (!push_value(wk, addr, count, type, aux, NO_FRAME, name == N_SAME ? node : HR_CHAINS_NONE,
			name, mode, elem_name))
		return wk->status;
	if (!count && mode == M_VALUE && scan_type_flat_ifaces(tb, id)) {
		/* what start_frame() comes to for it, without its checks (most heap objects) */
		if (!walk_flat_struct(wk, 0, id)) {
			wk->nframes = 0;
			return wk->status;
		}
		wk->frames[0].started = 1; /* a cursor from the member left to a frame */
	}
	while (wk->nframes && !wk->status) {
		uint32_t i = (uint32_t)wk->nframes - 1;
		bool keep;

		if (!wk->frames[i].started) {
			wk->frames[i].started = 1;
			keep = start_frame(wk, i);
		} else {
			keep = next_child(wk, i);
		}
		if (!keep && wk->nframes == (size_t)i + 1)
			wk->nframes--;
	}
	wk->nframes = 0;
	return wk->status;
}
