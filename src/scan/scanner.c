/* SPDX-License-Identifier: Apache-2.0 */
/*
 * scanner.c - the scan's lifecycle, its roots, the two passes and the accounting.
 *
 * Pass 1 walks every root by its DWARF type (walk.c) and then empties a first-in
 * first-out queue of heap objects, each walked by the typed view it was first reached
 * by: breadth first over all roots at once. An object is charged when it is first
 * reached, so each is charged exactly once, to the shortest chain.
 *
 * What pass 1 leaves: for each object it walked, the pointer words its type did not
 * explain (struct leftover, with a copy of those bits); and root words no variable
 * covers (struct root_word). Pass 2 follows both by the GC bitmaps alone.
 *
 * Both passes run on the thread that calls them, with the scan's own walker (struct
 * hr_scan's wk), which charges the results as it goes; pass 1's heap walk adds workers
 * (pass1_threads.c) and pass 2's drains a helper (mark.c).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scan_internal.h"

#define PROGRESS_EVERY (UINT64_C(1) << 16)
#define LEFTOVER_ALL UINT64_MAX /* every pointer word of the object is left */

const char *hr_root_kind_name(unsigned kind)
{
	static const char *const names[HR_ROOT_KIND_COUNT] = {
		"global variables", "frame variables", "finalizers", "queued finalizers",
		"other roots", "frame words without a variable", "data/bss words not typed by DWARF",
	};

	return kind < HR_ROOT_KIND_COUNT ? names[kind] : "unknown";
}

/*
 * The visited bits are read by pass 1's workers while this thread sets them (see
 * pass1_threads.c): relaxed atomic loads and stores, plain moves on the processors we
 * build for. This thread is the only one that sets them then.
 */
bool scan_visited(const struct walker *wk, uint32_t obj)
{
	return __atomic_load_n(&wk->visited[obj >> 6], __ATOMIC_RELAXED) >> (obj & 63) & 1;
}

int hr_scan_keep_paths(struct hr_scan *s, bool holders, struct hr_error *err)
{
	struct scan_paths *p = &s->res.paths;
	size_t n = s->ctx.nobj + 1;

	if ((!p->node && !(p->node = malloc(n * sizeof(*p->node)))) ||
	    (holders && !p->holder && !(p->holder = malloc(n * sizeof(*p->holder)))))
		return hr_error_set(err, HR_ENOMEM, "out of memory for the paths of %zu objects",
				    s->ctx.nobj);
	for (size_t i = 0; i < s->ctx.nobj; i++)
		scan_paths_set(p, (uint32_t)i, HR_CHAINS_NONE, HR_SCAN_NOT_REACHED);
	return HR_OK;
}

int hr_scan_keep_root_edges(struct hr_scan *s, struct hr_error *err)
{
	(void)err; /* nothing to allocate yet: the edges grow as they are found */
	s->ctx.keep_root_edges = true;
	return HR_OK;
}

int hr_scan_keep_goroutines(struct hr_scan *s, struct hr_error *err)
{
	(void)err; /* the shares grow as they are found */
	s->ctx.keep_goroutines = true;
	return HR_OK;
}

int hr_scan_keep_types(struct hr_scan *s, struct hr_error *err)
{
	struct scan_results *res = &s->res;

	if (!res->obj_type && !(res->obj_type = calloc(s->ctx.nobj + 1, sizeof(*res->obj_type))))
		return hr_error_set(err, HR_ENOMEM, "out of memory for the types of %zu objects",
				    s->ctx.nobj);
	return HR_OK;
}

void hr_scan_on_roots_walked(struct hr_scan *s, hr_scan_roots_fn fn, void *ctx)
{
	s->ctx.roots_walked = fn;
	s->ctx.roots_walked_ctx = ctx;
}

/* The root variable (a top node of the tree) node's chain starts at, or HR_CHAINS_NONE. */
static uint32_t root_of_node(const struct hr_chains *tree, uint32_t node)
{
	while (node != HR_CHAINS_NONE && hr_chains_node(tree, node)->parent != HR_CHAINS_TOP)
		node = hr_chains_node(tree, node)->parent;
	return node == HR_CHAINS_TOP ? HR_CHAINS_NONE : node;
}

/* An edge from node's root variable to obj, if node's chain starts at one. */
static int push_root_edge(const struct hr_chains *tree, struct hr_root_edge **edges, size_t *n,
			  size_t *cap, uint32_t node, uint32_t obj)
{
	struct hr_root_edge *e;

	if ((node = root_of_node(tree, node)) == HR_CHAINS_NONE)
		return HR_OK;
	if (!(e = hr_array_push((void **)edges, n, cap, sizeof(*e))))
		return HR_ENOMEM;
	*e = (struct hr_root_edge){ node, obj };
	return HR_OK;
}

void scan_root_edge(struct walker *wk, uint32_t node, uint32_t obj)
{
	struct scan_results *res = wk->res;

	if (push_root_edge(res->tree, &res->root_edges, &res->nroot_edges, &res->root_edges_cap,
			   node, obj))
		wk->status = HR_ENOMEM;
}

/*
 * What the root edges will be if the rest of the scan finds no more: those recorded,
 * then those pass 2 records from the root words known now, as root_word_edge() does.
 */
int hr_scan_root_edges_so_far(const struct hr_scan *s, struct hr_root_edge **edges, size_t *n)
{
	const struct scan_results *res = &s->res;
	size_t cap = res->nroot_edges + 1;

	*n = res->nroot_edges;
	if (!(*edges = malloc(cap * sizeof(**edges))))
		return HR_ENOMEM;
	if (*n)
		memcpy(*edges, res->root_edges, *n * sizeof(**edges));
	for (size_t i = 0; i < res->nroot_words; i++) {
		int64_t obj = hr_dump_object_at(s->ctx.tables.dump, res->root_words[i].value);

		if (obj >= 0 && push_root_edge(res->tree, edges, n, &cap, res->root_words[i].node,
					       (uint32_t)obj)) {
			free(*edges);
			*edges = NULL;
			return HR_ENOMEM;
		}
	}
	return HR_OK;
}

/*
 * scan_mark(), scan_charge() and scan_claim() are defined inline: the walk claims an
 * object for each pointer it follows, and LTO stopped inlining them into follow_charged()
 * when they took the walker (list-1m: 33 instructions an object more).
 */
inline bool scan_mark(struct walker *wk, uint32_t obj, uint32_t node)
{
	/* the walker's bits are the results' (a stream's worker logs its claims) */
	uint64_t *word = &wk->visited[obj >> 6], bits = __atomic_load_n(word, __ATOMIC_RELAXED);

	if (bits >> (obj & 63) & 1)
		return false;
	__atomic_store_n(word, bits | UINT64_C(1) << (obj & 63), __ATOMIC_RELAXED);
	scan_paths_set(&wk->res->paths, obj, node, wk->holder);
	return true;
}

inline void scan_charge(struct walker *wk, uint32_t node, uint32_t goroutine,
			uint64_t objects, uint64_t bytes, bool typed)
{
	struct scan_results *res = wk->res;

	/* the goroutine whose frame reached them, or reached the object that holds them */
	if (goroutine && wk->ctx->keep_goroutines &&
	    share_map_add(&res->shares, node, goroutine, objects, bytes))
		wk->status = HR_ENOMEM;
	hr_chains_charge(res->tree, node, objects, bytes);
	if (typed) {
		res->sum.typed_objects += objects;
		res->sum.typed_bytes += bytes;
	} else {
		res->sum.fallback_objects += objects;
		res->sum.fallback_bytes += bytes;
	}
}

inline bool scan_claim(struct walker *wk, uint32_t obj, uint64_t size, uint32_t node,
			bool typed)
{
	if (!scan_mark(wk, obj, node))
		return false;
	scan_charge(wk, node, wk->cur_goroutine, 1, size, typed);
	return true;
}

#define FEED_EVERY 256 /* objects queued; see pass1_feed() */

/* The queue, and the items pushed to it for one queued object: its pieces if more than 1. */
struct queue_pushes {
	struct work_queue *queue;
	uint64_t items;
};

static int push_to_queue(void *ctx, const struct work *w)
{
	struct queue_pushes *q = ctx;

	q->items++;
	return queue_push(q->queue, w);
}

int scan_enqueue(struct walker *wk, const struct work *w)
{
	struct scan_results *res = wk->res;
	struct queue_pushes q = { &res->queue, 0 };
	int rc = scan_split_work(&wk->tables, w, push_to_queue, &q);

	if (q.items > 1) {
		res->sum.split_runs++;
		res->sum.pieces += q.items;
	}
	res->sum.queued_objects++;
	if (res->pool && ++res->queued_since_feed >= FEED_EVERY) {
		res->queued_since_feed = 0;
		pass1_feed(wk);
	}
	return rc;
}

const struct hr_scan_summary *hr_scan_summary(const struct hr_scan *s)
{
	return &s->res.sum;
}

void scan_progress(struct walker *wk, const char *phase, uint64_t uncounted)
{
	const struct scan_ctx *ctx = wk->ctx;
	const struct hr_scan_options *opts = &ctx->opts;
	struct scan_results *res = wk->res;
	uint64_t done = res->sum.typed_objects + res->sum.fallback_objects + uncounted;

	if (opts->progress && done >= res->progress_next) {
		res->progress_next = done + PROGRESS_EVERY;
		opts->progress(opts->progress_arg, phase, done, ctx->nobj);
	}
}

/* --- lifecycle ---------------------------------------------------------------------- */

/* The N of a "go1.N..." version, 0 if it has none. */
static unsigned scan_go_minor(const char *version)
{
	return layout_go_minor(&(struct hr_bytes){ (const uint8_t *)version, strlen(version) });
}

int hr_scan_image(const struct hr_dump *dump, const struct hr_binary *bin, struct hr_image *out,
		  struct hr_error *err)
{
	const struct hr_dump_params *p = hr_dump_params(dump);

	*out = (struct hr_image){ bin, 0 };
	if (p->load_bias_known) /* a core's entry point said it */
		return hr_image_at(bin, p->load_bias, out, err);
	if (hr_dump_data(dump)->present && hr_binary_has_file(bin))
		return hr_image_from_data(bin, hr_dump_data(dump)->addr, out, err);
	return HR_OK;
}

/* Whether the scan can read dump with bin at all; then where the process loaded bin. */
static int check_pair(const struct hr_dump *dump, const struct hr_binary *bin,
		      struct hr_image *img, struct hr_error *err)
{
	const struct hr_dump_params *p = hr_dump_params(dump);

	if (p->ptr_size != 8 || p->big_endian)
		return hr_error_set(err, HR_EINPUT,
				    "%s: byte %" PRIu64 ": the params record says %u-byte pointers, "
				    "%s-endian: heapref analyses 8-byte little-endian dumps only",
				    hr_dump_path(dump), hr_dump_params_offset(dump), p->ptr_size,
				    p->big_endian ? "big" : "little");
	if (hr_binary_ptr_size(bin) && hr_binary_ptr_size(bin) != p->ptr_size)
		return hr_error_set(err, HR_EINPUT, "%s: %u-byte pointers, but the dump has %u",
				    hr_binary_path(bin), hr_binary_ptr_size(bin), p->ptr_size);
	return hr_scan_image(dump, bin, img, err);
}

static uint8_t role_of(const char *name)
{
	static const struct {
		const char *name;
		uint8_t role;
	} roles[] = {
		{ "keys", ROLE_KEYS }, { "values", ROLE_VALUES }, { "elems", ROLE_VALUES },
		{ "slots", ROLE_SLOTS }, { "overflow", ROLE_OVERFLOW }, { "key", ROLE_KEY },
		{ "elem", ROLE_ELEM }, { "v", ROLE_V },
	};

	for (size_t i = 0; i < sizeof(roles) / sizeof(roles[0]); i++)
		if (!strcmp(name, roles[i].name))
			return roles[i].role;
	return ROLE_OTHER;
}

/* Members of the types, by index; their roles. */
static int load_member_roles(struct scan_tables *tb)
{
	uint32_t n = 0;

	for (uint32_t id = 0; id < tb->ntypes; id++) {
		const struct hr_type *t = hr_binary_type(tb->bin, id);

		if (t->member_count && t->first_member + t->member_count > n)
			n = t->first_member + t->member_count;
	}
	tb->member_roles = malloc(n ? n : 1);
	if (!tb->member_roles)
		return HR_ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		const struct hr_member *m = hr_binary_member(tb->bin, i);

		tb->member_roles[i] = m ? role_of(m->name) : ROLE_OTHER;
	}
	tb->nmembers = n;
	return HR_OK;
}

enum { INERT_UNKNOWN, INERT_PENDING, INERT_YES, INERT_NO };

/*
 * Whether a value of type id is inert: start_frame() (walk.c) does nothing with it,
 * whatever pointer bits it holds. state[] memoises, and breaks cycles a broken binary
 * might have (a type found inside itself counts as not inert, as does a deep one).
 */
static bool type_inert(const struct scan_tables *tb, uint8_t *state, uint32_t id, int depth)
{
	const struct hr_type *t;
	bool inert = true;

	if (id >= tb->ntypes)
		return true; /* the void type */
	if (state[id] == INERT_YES || state[id] == INERT_NO)
		return state[id] == INERT_YES;
	if (state[id] == INERT_PENDING || depth > 64)
		return false;
	state[id] = INERT_PENDING;
	t = tb->types[id].t;
	switch (t->kind) {
	case HR_KIND_PTR: case HR_KIND_UNSAFE_POINTER: case HR_KIND_STRING: case HR_KIND_SLICE:
	case HR_KIND_INTERFACE: case HR_KIND_MAP: case HR_KIND_CHAN: case HR_KIND_FUNC:
		inert = false;
		break;
	default:
		if (t->shape == HR_SHAPE_STRUCT)
			for (uint32_t k = 0; k < t->member_count && inert; k++)
				inert = type_inert(tb, state,
						   hr_binary_member(tb->bin, t->first_member + k)->type,
						   depth + 1);
		else if (t->shape == HR_SHAPE_ARRAY && t->count && t->elem)
			inert = type_inert(tb, state, t->elem, depth + 1);
		break;
	}
	state[id] = inert ? INERT_YES : INERT_NO;
	return inert;
}

/*
 * The kinds walk_leaf() (walk.c) walks without a frame of their own. Not a func: its
 * closure is named below a frame of the func value's own, which a flat struct's walk
 * does not push (a struct holding a func would leave its closure to pass 2, unnamed).
 */
static bool leaf_kind(unsigned kind)
{
	return kind == HR_KIND_PTR || kind == HR_KIND_STRING || kind == HR_KIND_SLICE ||
	       kind == HR_KIND_MAP || kind == HR_KIND_CHAN;
}

/*
 * Whether resolved type id is a plain struct (no sync layout, not an atomic.Pointer)
 * each of whose members is inert or of a leaf kind (or, with ifaces, an interface): most
 * heap objects of many programs (list nodes, records of strings, slices and pointers).
 */
static bool type_flat(const struct scan_tables *tb, uint32_t id, bool ifaces)
{
	const struct hr_type *t = tb->types[id].t;

	/* (DWARF gives strings, slices and interfaces the shape of a struct too) */
	if (tb->types[id].resolved != id || t->shape != HR_SHAPE_STRUCT || leaf_kind(t->kind) ||
	    t->kind == HR_KIND_FUNC ||
	    t->kind == HR_KIND_INTERFACE || t->kind == HR_KIND_UNSAFE_POINTER ||
	    tb->types[id].layout || layout_atomic_pointer(tb->bin, id))
		return false;
	for (uint32_t k = 0; k < t->member_count; k++) {
		uint32_t type = hr_binary_member(tb->bin, t->first_member + k)->type;

		unsigned kind = scan_resolved_type(tb, type)->kind;

		if (!scan_type_inert(tb, type) && !leaf_kind(kind) &&
		    !(ifaces && kind == HR_KIND_INTERFACE))
			return false;
	}
	return true;
}

/*
 * The tables behind scan_resolve(), scan_type_inert(), scan_type_layout() and
 * scan_member_role(): the walk looks a type up for every value it reads. (Types are
 * loaded with the binary, so their entries stay put.)
 */
static int load_types(struct scan_ctx *ctx)
{
	struct scan_tables *tb = &ctx->tables;
	uint32_t n = hr_binary_type_count(tb->bin);
	uint8_t *state;

	tb->types = malloc(((size_t)n + 1) * sizeof(*tb->types));
	state = calloc((size_t)n + 1, 1);
	if (!tb->types || !state) {
		free(state);
		return HR_ENOMEM;
	}
	for (uint32_t id = 0; id < n; id++) {
		uint32_t resolved = layout_resolve(tb->bin, id);

		tb->types[id] = (struct scan_type){ hr_binary_type(tb->bin, resolved), resolved, false,
						    SL_NONE, false, false };
	}
	/* the void type */
	tb->types[n] = (struct scan_type){ hr_binary_type(tb->bin, n), n, true, SL_NONE, false,
					   false };
	tb->ntypes = n;
	for (uint32_t id = 0; id < n; id++)
		tb->types[id].inert = type_inert(tb, state, id, 0);
	free(state);
	if (load_member_roles(tb) || sync_load_layouts(ctx))
		return HR_ENOMEM;
	for (uint32_t id = 0; id < n; id++) {
		tb->types[id].flat = type_flat(tb, id, false);
		tb->types[id].flat_ifaces = type_flat(tb, id, true);
	}
	return HR_OK;
}

/* The N of the dump's go1.N, else of the binary's (dumps before go1.7's record none). */
static unsigned go_minor_of(const struct hr_dump *dump, const struct hr_binary *bin)
{
	unsigned minor = scan_go_minor(hr_dump_provenance(dump)->go_version);

	/* dumps before go1.5's format record no release: the binary's */
	return minor ? minor : scan_go_minor(hr_binary_go_version(bin));
}

/* The context of a scan of dump with bin: the tables the walk reads. 0 or HR_ENOMEM. */
static int ctx_init(struct scan_ctx *ctx, const struct hr_dump *dump, const struct hr_image *img,
		    const struct hr_scan_options *opts)
{
	const struct hr_binary *bin = img->bin;
	struct scan_tables *tb = &ctx->tables;

	tb->dump = dump;
	tb->bin = bin;
	tb->img = *img;
	if (opts)
		ctx->opts = *opts;
	ctx->tables.ps = hr_dump_params(dump)->ptr_size;
	ctx->nobj = hr_dump_object_count(dump);
	ctx->go_minor = go_minor_of(dump, bin);
	ctx->cpus = hr_cpus_usable();
	ctx->record_types = hr_dump_has_object_types(dump);
	ctx->g_type = hr_binary_find_type(bin, "runtime.g");
	ctx->sudog_type = hr_binary_find_type(bin, "runtime.sudog");
	return load_types(ctx) || layout_load_itabs(ctx) ? HR_ENOMEM : HR_OK;
}

static void ctx_release(struct scan_ctx *ctx)
{
	free(ctx->itabs);
	free(ctx->tables.types);
	free(ctx->tables.member_roles);
	free(ctx->sync.tries);
}

/* Empty results for ctx, charging tree: the visited bits and the summary's totals. */
static int results_init(struct scan_results *res, const struct scan_ctx *ctx,
			struct hr_chains *tree)
{
	res->tree = tree;
	res->sum.total_objects = ctx->nobj;
	res->sum.total_bytes = hr_dump_object_bytes(ctx->tables.dump);
	res->sum.go_minor = ctx->go_minor;
	res->visited = calloc(hr_bit_words(ctx->nobj) + 1, sizeof(uint64_t));
	return res->visited ? HR_OK : HR_ENOMEM;
}

static void results_release(struct scan_results *res)
{
	free(res->visited);
	free(res->paths.node);
	free(res->paths.holder);
	free(res->obj_type);
	share_map_release(&res->shares);
	free(res->root_edges);
	queue_release(&res->queue);
	free(res->leftovers);
	free(res->leftover_bits);
	free(res->root_words);
	free(res->stack2);
	free(res->record_queue);
}

/* struct hr_scan zeroed, on cache lines of its own (see its comment); NULL out of memory. */
static struct hr_scan *scan_alloc(void)
{
	size_t align = _Alignof(struct hr_scan);
	size_t size = (sizeof(struct hr_scan) + align - 1) / align * align;
	struct hr_scan *s = aligned_alloc(align, size);

	if (s)
		memset(s, 0, size);
	return s;
}

struct hr_scan *hr_scan_new(const struct hr_dump *dump, const struct hr_binary *bin,
			    struct hr_chains *tree, const struct hr_scan_options *opts,
			    struct hr_error *err)
{
	struct hr_image img;
	struct hr_scan *s;

	if (check_pair(dump, bin, &img, err))
		return NULL;
	s = scan_alloc();
	if (!s || ctx_init(&s->ctx, dump, &img, opts) || results_init(&s->res, &s->ctx, tree))
		goto nomem;
	walker_init(&s->wk, &s->ctx, &s->res);
	return s;
nomem:
	hr_scan_free(s);
	hr_error_set(err, HR_ENOMEM, "out of memory preparing the scan");
	return NULL;
}

void hr_scan_free(struct hr_scan *s)
{
	if (!s)
		return;
	walker_release(&s->wk);
	results_release(&s->res);
	ctx_release(&s->ctx);
	free(s);
}

/* --- what pass 1 leaves for pass 2 -------------------------------------------------- */

static int add_root_word(struct walker *wk, uint64_t value, uint32_t node)
{
	struct scan_results *res = wk->res;
	struct root_word *w = hr_array_push((void **)&res->root_words, &res->nroot_words,
					    &res->root_words_cap, sizeof(*w));

	if (!w)
		return HR_ENOMEM;
	*w = (struct root_word){ value, node, wk->cur_goroutine };
	return HR_OK;
}

/* Whether value leads to a heap object nothing has reached yet. */
static bool leads_somewhere(const struct walker *wk, uint64_t value)
{
	int64_t i = hr_dump_object_at(wk->tables.dump, value);

	return i >= 0 && !scan_visited(wk, (uint32_t)i);
}

int scan_add_leftover(struct walker *wk, uint32_t obj, uint32_t node, const uint64_t *bits,
		      uint64_t nwords, uint32_t part)
{
	struct scan_results *res = wk->res;
	struct leftover *l;
	size_t words = (size_t)hr_bit_words(nwords);

	if (wk->log)
		return pass1_log_leftover(wk, obj, node, bits, nwords, part);
	l = hr_array_push((void **)&res->leftovers, &res->nleftovers, &res->leftovers_cap,
			  sizeof(*l));
	if (!l)
		return HR_ENOMEM;
	*l = (struct leftover){ .obj = obj, .node = node, .bits = LEFTOVER_ALL,
				.goroutine = wk->cur_goroutine, .part = bits ? part : 0 };
	if (!bits)
		return HR_OK;
	if (hr_array_reserve((void **)&res->leftover_bits, &res->leftover_bits_cap,
			     res->leftover_bits_len + words + !!part, sizeof(uint64_t)))
		return HR_ENOMEM;
	l->bits = res->leftover_bits_len;
	if (part)
		res->leftover_bits[res->leftover_bits_len++] = nwords;
	memcpy(res->leftover_bits + res->leftover_bits_len, bits, words * sizeof(uint64_t));
	res->leftover_bits_len += words;
	return HR_OK;
}

/* A region over words [first, first + nwords) of heap object o, its bits copied. */
static int object_part_region(const struct scan_tables *tb, struct hr_object o, uint64_t first,
			      uint64_t nwords, uint64_t **bits, size_t *cap, struct region *r)
{
	uint64_t at = first * tb->ps;

	if (hr_array_reserve((void **)bits, cap, hr_bit_words(nwords) + 1, sizeof(uint64_t)))
		return HR_ENOMEM;
	hr_dump_ptr_bits_at(tb->dump, o.addr + at, nwords, *bits);
	*r = (struct region){ o.addr + at, first + nwords == o.size / tb->ps ? o.size - at
									    : nwords * tb->ps,
			      o.data + at, *bits, nwords, tb->ps };
	return HR_OK;
}

int scan_object_region(const struct scan_tables *tb, uint32_t obj, uint64_t **bits, size_t *cap,
		       struct region *r)
{
	struct hr_object o = hr_dump_object(tb->dump, obj);

	return object_part_region(tb, o, 0, o.size / tb->ps, bits, cap, r);
}

/*
 * The region piece w walks (see PIECE_*): its elements, from the object's start for
 * the first piece, to its end for the last.
 */
static int piece_region(struct walker *wk, const struct work *w, struct region *r)
{
	const struct scan_tables *tb = &wk->tables;
	struct hr_object o = hr_dump_object(tb->dump, w->obj);
	uint64_t first = w->piece & PIECE_CONT ? scan_words(tb, w->offset) : 0;
	uint64_t end = w->piece & PIECE_MORE ? scan_words(tb, w->offset + scan_work_bytes(tb, w))
					     : o.size / tb->ps;

	return object_part_region(tb, o, first, end - first, &wk->obj_bits, &wk->obj_bits_cap, r);
}

/* --- pass 1: roots ------------------------------------------------------------------ */

static void set_root_name(struct walker *wk, char *buf, size_t len, const char *fmt, ...)
	HR_PRINTF(4, 5);

static void set_root_name(struct walker *wk, char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	wk->root_name = buf;
	wk->root_name_len = n < 0 ? 0 : (size_t)n < len ? (size_t)n : len - 1;
}

/* A region over a data or bss segment, its bits a copy to tick. */
static int segment_region(const struct scan_tables *tb, const struct hr_segment *seg,
			  struct region *r)
{
	*r = (struct region){ 0 };
	if (!seg->present)
		return HR_OK;
	r->addr = seg->addr;
	r->len = seg->contents.len;
	r->data = seg->contents.ptr;
	r->nwords = r->len / tb->ps;
	r->ps = tb->ps;
	r->bits = malloc(hr_bit_words(r->nwords) * sizeof(uint64_t) + sizeof(uint64_t));
	if (!r->bits)
		return HR_ENOMEM;
	memcpy(r->bits, seg->ptr_bits, hr_bit_words(r->nwords) * sizeof(uint64_t));
	return HR_OK;
}

static int walk_globals(struct walker *wk, struct region seg[2])
{
	const struct scan_tables *tb = &wk->tables;
	char name[512];

	for (size_t i = 0; i < hr_binary_global_count(tb->bin) && !wk->status; i++) {
		const struct hr_global *g = hr_binary_global(tb->bin, i);
		uint64_t size = hr_binary_type(tb->bin, layout_resolve(tb->bin, g->type))->size;
		uint64_t at = hr_image_runtime(&tb->img, g->addr);

		for (int k = 0; k < 2; k++) {
			struct region *r = &seg[k];

			if (at < r->addr || at - r->addr >= r->len)
				continue;
			if (!region_has_ptrs(r, at, size ? size : tb->ps))
				break;
			wk->res->sum.roots[HR_ROOT_GLOBAL]++;
			set_root_name(wk, name, sizeof(name), "%s", g->name);
			walk_value(wk, r, at, g->type, 0, M_VALUE, N_SAME, 0, N_ROOT, HR_CHAINS_NONE);
			break;
		}
	}
	return wk->status;
}

/*
 * Data and bss words the typed walk of the globals did not read: inside a global (an
 * unsafe.Pointer, say) they go below it as "$sub_objects$"; elsewhere they are roots
 * named by the ELF symbol holding them.
 */
static int leftover_segment_words(struct walker *wk, const struct region *r, const char *seg)
{
	const struct scan_tables *tb = &wk->tables;
	char name[512];

	for (uint64_t w = hr_bit_next(r->bits, 0, r->nwords); w < r->nwords;
	     w = hr_bit_next(r->bits, w + 1, r->nwords)) {
		uint64_t addr = r->addr + w * tb->ps, value = region_word(tb, r, addr);
		const struct hr_global *g;
		const struct hr_symbol *sym;
		uint32_t node;
		size_t len;

		if (!leads_somewhere(wk, value))
			continue;
		g = hr_image_global_at(&tb->img, addr);
		if (g) { /* in a variable, but not where its type has a pointer: $sub_objects$ */
			node = sub_objects_node(wk, root_node(wk, g->name, strlen(g->name)));
			wk->res->sum.roots[HR_ROOT_DATA_WORDS]++;
			if (add_root_word(wk, value, node))
				return HR_ENOMEM;
			continue;
		}
		sym = hr_image_symbol_at(&tb->img, addr);
		if (sym)
			len = (size_t)snprintf(name, sizeof(name), "%s", sym->name);
		else
			len = (size_t)snprintf(name, sizeof(name), "$%s+0x%" PRIx64, seg,
					       addr - r->addr);
		wk->res->sum.roots[HR_ROOT_DATA_WORDS]++;
		if (len >= sizeof(name))
			len = sizeof(name) - 1;
		if (add_root_word(wk, value, root_node(wk, name, len)))
			return HR_ENOMEM;
	}
	return wk->status;
}

/*
 * The data roots of a dump that gives its roots as pointers (the pre-release go1.3
 * layout): each named by the global variable or ELF symbol holding its address, else by
 * the address ("$data 0x601020"), what it leads to left to pass 2 as an untyped data
 * word's. They come first among the root pointers.
 */
static int walk_data_root_pointers(struct walker *wk)
{
	const struct scan_tables *tb = &wk->tables;
	size_t n;
	const struct hr_root_pointer *r = hr_dump_root_pointers(tb->dump, &n);
	char name[512];

	for (size_t i = 0; i < n && r[i].frame == HR_NO_FRAME && !wk->status; i++) {
		const struct hr_global *g;
		const struct hr_symbol *sym;

		if (!leads_somewhere(wk, r[i].ptr))
			continue;
		if ((g = hr_image_global_at(&tb->img, r[i].addr)))
			set_root_name(wk, name, sizeof(name), "%s", g->name);
		else if ((sym = hr_image_symbol_at(&tb->img, r[i].addr)))
			set_root_name(wk, name, sizeof(name), "%s", sym->name);
		else
			set_root_name(wk, name, sizeof(name), "$data 0x%" PRIx64, r[i].addr);
		wk->res->sum.roots[HR_ROOT_DATA_WORDS]++;
		if (add_root_word(wk, r[i].ptr, root_node(wk, wk->root_name, wk->root_name_len)))
			return HR_ENOMEM;
	}
	return wk->status;
}

/*
 * The stack roots of such a dump, after its data roots, in the order of their frames:
 * each named after its frame's function and charged to its goroutine, as a frame word
 * no variable explains.
 */
static int walk_stack_root_pointers(struct walker *wk)
{
	const struct scan_tables *tb = &wk->tables;
	size_t n, nf;
	const struct hr_root_pointer *r = hr_dump_root_pointers(tb->dump, &n);
	const struct hr_frame *frames = hr_dump_frames(tb->dump, &nf);
	uint32_t node = HR_CHAINS_NONE, node_frame = HR_NO_FRAME;

	for (size_t i = 0; i < n && !wk->status; i++) {
		const struct hr_frame *f;

		if (r[i].frame == HR_NO_FRAME || r[i].frame >= nf || !leads_somewhere(wk, r[i].ptr))
			continue;
		f = &frames[r[i].frame];
		wk->cur_goroutine = f->goroutine + 1;
		if (r[i].frame != node_frame) {
			node = root_node(wk, (const char *)f->func_name.ptr, f->func_name.len);
			node_frame = r[i].frame;
			wk->res->sum.roots[HR_ROOT_FRAME_WORDS]++;
		}
		if (add_root_word(wk, r[i].ptr, node))
			return HR_ENOMEM;
	}
	wk->cur_goroutine = 0;
	return wk->status;
}

/* One goroutine's stack as a region: its frames, contiguous in memory, copied together. */
struct stack {
	struct region r;
	uint8_t *mem;
	size_t mem_cap;
	uint64_t *bits;
	size_t bits_cap;
};

static int build_stack(const struct scan_tables *tb, const struct hr_frame *f, size_t n,
		       struct stack *st)
{
	uint64_t lo = f[0].sp, hi = f[0].sp, total = 0;

	for (size_t i = 0; i < n; i++) {
		if (f[i].sp != hi) /* not contiguous: frames stand alone */
			return HR_EINPUT;
		hi += f[i].contents.len;
		total += f[i].contents.len;
	}
	if (hr_array_reserve((void **)&st->mem, &st->mem_cap, total + 1, 1) ||
	    hr_array_reserve((void **)&st->bits, &st->bits_cap, hr_bit_words(total / tb->ps) + 1,
			     sizeof(uint64_t)))
		return HR_ENOMEM;
	memset(st->bits, 0, (hr_bit_words(total / tb->ps) + 1) * sizeof(uint64_t));
	for (size_t i = 0; i < n; i++) {
		uint64_t at = f[i].sp - lo;

		if (f[i].contents.len) /* a frame of no contents may have no pointer */
			memcpy(st->mem + at, f[i].contents.ptr, f[i].contents.len);
		for (uint64_t w = 0; w < f[i].contents.len / tb->ps; w++)
			if (hr_dump_frame_ptr_bit(tb->dump, &f[i], w))
				hr_bit_set(st->bits, at / tb->ps + w);
	}
	st->r = (struct region){ .addr = lo, .len = total, .data = st->mem, .bits = st->bits,
				 .nwords = total / tb->ps, .ps = tb->ps };
	return HR_OK;
}

/*
 * Lays out a variable located in pieces (DW_OP_piece: optimised code keeps a slice's
 * pointer in a stack slot and its length and capacity in registers, or nowhere) as one
 * value in wk->pieces: the pieces in the frame copied with their pointer bits, constants
 * written, the rest zero, except an unknown slice capacity, which is set to the most
 * there can be (the walk then views the backing array as far as its object goes).
 * Returns how many words of the value are in the frame, 0 if none (or if a piece is
 * not where a frame's word is).
 */
static size_t assemble_pieces(struct walker *wk, const struct region *r, uint64_t cfa,
			      const struct hr_var *v, uint64_t size, bool slice)
{
	const struct scan_tables *tb = &wk->tables;
	struct piece_scratch *ps = &wk->pieces;
	uint64_t nwords = (size + tb->ps - 1) / tb->ps, at = 0;
	size_t known = 0;

	if (!nwords || nwords > 64 || /* a huge value in pieces: not worth it */
	    hr_array_reserve((void **)&ps->mem, &ps->mem_cap, nwords * tb->ps, 1) ||
	    hr_array_reserve((void **)&ps->bits, &ps->bits_cap, 2, sizeof(uint64_t)) ||
	    hr_array_reserve((void **)&ps->frame_word, &ps->frame_word_cap, nwords,
			     sizeof(uint64_t)))
		return 0;
	memset(ps->mem, 0, nwords * tb->ps);
	ps->bits[0] = ps->bits[1] = 0;
	for (uint64_t w = 0; w < nwords; w++)
		ps->frame_word[w] = UINT64_MAX;
	if (slice) /* unknown until a piece says otherwise */
		memset(ps->mem + 2 * tb->ps, 0xff, tb->ps);
	for (uint32_t k = 0; k < v->piece_count; k++) {
		const struct hr_loc_piece *p = &wk->fv.pieces[v->first_piece + k];
		uint64_t len = p->size, addr = cfa + (uint64_t)p->offset;

		if (!len || len > nwords * tb->ps - at) /* at <= nwords * ps: no overflow */
			return 0;
		if (p->kind == HR_LOC_VALUE && len == tb->ps && at % tb->ps == 0) {
			for (unsigned b = 0; b < tb->ps; b++) /* little-endian dumps only */
				ps->mem[at + b] = (uint8_t)((uint64_t)p->offset >> (8 * b));
		} else if (p->kind == HR_LOC_CFA) {
			if (at % tb->ps || len % tb->ps || addr < r->addr ||
			    (addr - r->addr) % tb->ps ||
			    addr - r->addr > r->len || r->len - (addr - r->addr) < len)
				return 0;
			memcpy(ps->mem + at, r->data + (addr - r->addr), len);
			for (uint64_t w = 0; w < len / tb->ps; w++) {
				uint64_t fw = (addr - r->addr) / tb->ps + w;

				ps->frame_word[at / tb->ps + w] = fw;
				if (hr_bit_get(r->bits, fw))
					hr_bit_set(ps->bits, at / tb->ps + w);
				known++;
			}
		}
		at += len;
	}
	return known;
}

/*
 * Walks variable v, located in pieces, by its type (assemble_pieces()); the frame's
 * words it settles are ticked in r. A pointer word of a piece the typed walk could not
 * read (an interface whose type word is in no piece) is followed all the same, the
 * object it leads to charged to the variable and its contents left to pass 2. Returns
 * false when no piece is in the frame.
 */
static bool walk_pieces(struct walker *wk, struct region *r, uint64_t cfa,
			const struct hr_var *v, uint64_t size)
{
	const struct scan_tables *tb = &wk->tables;
	const struct hr_type *t = hr_binary_type(tb->bin, layout_resolve(tb->bin, v->type));
	struct piece_scratch *ps = &wk->pieces;
	struct region value;
	uint64_t nwords = (size + tb->ps - 1) / tb->ps;

	if (!assemble_pieces(wk, r, cfa, v, size, t->kind == HR_KIND_SLICE))
		return false;
	if (!bits_any(ps->bits, 0, nwords))
		return true; /* in the frame, but nothing there leads anywhere */
	wk->res->sum.roots[HR_ROOT_FRAME_VAR]++;
	value = (struct region){ .addr = 0x1000, .len = nwords * tb->ps, .data = ps->mem,
				 .bits = ps->bits, .nwords = nwords, .ps = tb->ps };
	walk_value(wk, &value, value.addr, v->type, 0, M_VALUE, N_SAME, 0, N_ROOT, HR_CHAINS_NONE);
	for (uint64_t w = 0; w < nwords && !wk->status; w++) {
		uint64_t fw = ps->frame_word[w];

		if (fw == UINT64_MAX || !hr_bit_get(r->bits, fw))
			continue;
		if (hr_bit_get(ps->bits, w) &&
		    !follow_root_value(wk, region_word(tb, &value, value.addr + w * tb->ps), 0,
				       M_VALUE))
			continue;
		hr_bit_clear(r->bits, fw); /* settled: read by type, or followed untyped */
	}
	return true;
}

/*
 * A goroutine's own bookkeeping, which the runtime's frames point to while it waits
 * (runtime.chanrecv.gp, runtime.chanrecv.mysg, runtime.selectgo.sg, ...): the root name
 * for a variable pointing to a runtime.g or runtime.sudog, NULL for any other. Its
 * memory is the goroutine's, not a variable's of the program.
 */
static const char *bookkeeping_root(const struct walker *wk, uint32_t type)
{
	const struct scan_tables *tb = &wk->tables;
	const struct hr_type *t = hr_binary_type(tb->bin, layout_resolve(tb->bin, type));
	uint32_t to;

	if (t->shape != HR_SHAPE_POINTER || !t->target)
		return NULL;
	to = layout_resolve(tb->bin, t->target);
	if (to && to == wk->ctx->g_type)
		return "$goroutine (runtime.g)";
	if (to && to == wk->ctx->sudog_type)
		return "$goroutine (runtime.sudog)";
	return NULL;
}

/* The variables DWARF places in frame f, walked as roots "pkg.Func.var". */
static int walk_frame_vars(struct walker *wk, const struct hr_frame *f, struct region *r)
{
	const struct scan_tables *tb = &wk->tables;
	uint64_t pc = f->pc != f->entry_pc ? f->pc - 1 : f->pc; /* as the GC reads it */
	uint64_t cfa = f->sp + f->contents.len;
	int64_t fn = hr_image_func_at(&tb->img, pc);
	struct hr_error err = { 0 };
	const char *bookkeeping;
	char name[512];

	if (fn < 0 || hr_image_func_vars(&tb->img, (size_t)fn, pc, &wk->fv, &err))
		return err.code == HR_ENOMEM ? HR_ENOMEM : HR_OK;
	for (size_t i = 0; i < wk->fv.count && !wk->status; i++) {
		const struct hr_var *v = &wk->fv.vars[i];
		const struct hr_loc_piece *p = &wk->fv.pieces[v->first_piece];
		uint64_t size = hr_binary_type(tb->bin, layout_resolve(tb->bin, v->type))->size, addr;

		if (!v->in_scope || !v->piece_count || p->kind == HR_LOC_NONE ||
		    p->kind == HR_LOC_VALUE)
			continue;
		if (v->piece_count > 1) {
			set_root_name(wk, name, sizeof(name), "%s.%s",
				      hr_binary_func(tb->bin, (size_t)fn)->name, v->name);
			if (!walk_pieces(wk, r, cfa, v, size))
				wk->res->sum.skipped_vars++;
			continue;
		}
		if (p->kind != HR_LOC_CFA) {
			wk->res->sum.skipped_vars++;
			continue;
		}
		addr = cfa + (uint64_t)p->offset;
		if (!region_has_ptrs(r, addr, size ? size : tb->ps))
			continue;
		wk->res->sum.roots[HR_ROOT_FRAME_VAR]++;
		if ((bookkeeping = bookkeeping_root(wk, v->type)))
			set_root_name(wk, name, sizeof(name), "%s", bookkeeping);
		else
			set_root_name(wk, name, sizeof(name), "%s.%s",
				      hr_binary_func(tb->bin, (size_t)fn)->name, v->name);
		walk_value(wk, r, addr, v->type, 0, M_VALUE, N_SAME, 0, N_ROOT, HR_CHAINS_NONE);
	}
	return wk->status;
}

/* Frame words no variable explained: roots named after the frame's function. */
static int leftover_frame_words(struct walker *wk, const struct hr_frame *f,
				const struct region *r)
{
	const struct scan_tables *tb = &wk->tables;
	uint64_t from = (f->sp - r->addr) / tb->ps, to = from + f->contents.len / tb->ps;
	uint32_t node = HR_CHAINS_NONE;

	for (uint64_t w = hr_bit_next(r->bits, from, to); w < to; w = hr_bit_next(r->bits, w + 1, to)) {
		uint64_t value = region_word(tb, r, r->addr + w * tb->ps);

		if (!leads_somewhere(wk, value))
			continue;
		if (node == HR_CHAINS_NONE) {
			node = root_node(wk, (const char *)f->func_name.ptr, f->func_name.len);
			wk->res->sum.roots[HR_ROOT_FRAME_WORDS]++;
		}
		if (add_root_word(wk, value, node))
			return HR_ENOMEM;
	}
	return wk->status;
}

static int walk_frames(struct walker *wk, const struct hr_frame *f, size_t n, struct stack *st)
{
	int rc = build_stack(&wk->tables, f, n, st);

	if (rc == HR_EINPUT) { /* frames that do not touch: one region each */
		rc = HR_OK;
		for (size_t i = 0; i < n && !rc; i++)
			rc = walk_frames(wk, &f[i], 1, st);
		return rc;
	}
	for (size_t i = 0; i < n && !rc; i++)
		rc = walk_frame_vars(wk, &f[i], &st->r);
	for (size_t i = 0; i < n && !rc; i++)
		rc = leftover_frame_words(wk, &f[i], &st->r);
	return rc;
}

static int walk_goroutines(struct walker *wk)
{
	const struct scan_tables *tb = &wk->tables;
	size_t ng, nf;
	const struct hr_goroutine *g = hr_dump_goroutines(tb->dump, &ng);
	const struct hr_frame *frames = hr_dump_frames(tb->dump, &nf);
	struct stack st = { 0 };
	int rc = HR_OK;
	/* the pre-release go1.3 layout's frames have no contents: its stack roots are the
	 * words (walk_stack_root_pointers()) */
	bool roots_as_pointers = hr_dump_provenance(tb->dump)->prerelease;

	for (size_t i = 0; i < ng && !rc; i++) {
		wk->cur_goroutine = (uint32_t)i + 1;
		if (g[i].frame_count && !roots_as_pointers)
			rc = walk_frames(wk, &frames[g[i].first_frame], g[i].frame_count, &st);
	}
	wk->cur_goroutine = 0;
	free(st.mem);
	free(st.bits);
	return rc;
}

static const char *rtype_name(const struct walker *wk, uint64_t rtype)
{
	const struct scan_tables *tb = &wk->tables;
	uint32_t id = rtype ? hr_image_type_by_runtime_addr(&tb->img, rtype) : 0;

	return id ? hr_binary_type(tb->bin, id)->name : "unknown type";
}

/* Registered finalizers keep their function and what their object points to. */
static int walk_finalizers(struct walker *wk)
{
	const struct scan_tables *tb = &wk->tables;
	size_t n;
	const struct hr_finalizer *fin = hr_dump_finalizers(tb->dump, &n);
	struct region r;
	char name[512];

	for (size_t i = 0; i < n && !wk->status; i++) {
		uint32_t ptr = fin[i].obj_type ? hr_image_type_by_runtime_addr(&tb->img,
										fin[i].obj_type) : 0;
		int64_t obj = hr_dump_object_at(tb->dump, fin[i].obj);

		wk->res->sum.roots[HR_ROOT_FINALIZER]++;
		set_root_name(wk, name, sizeof(name), "$finalizer (%s)",
			      rtype_name(wk, fin[i].obj_type));
		follow_root_value(wk, fin[i].fn, 0, M_CLOSURE);
		if (obj >= 0 &&
		    !scan_object_region(tb, (uint32_t)obj, &wk->obj_bits, &wk->obj_bits_cap, &r)) {
			/* the object itself is not kept: walk it without charging it */
			uint32_t node = HR_CHAINS_NONE;

			walk_value(wk, &r, fin[i].obj, layout_pointee(tb->bin, ptr), 0, M_VALUE, N_SAME,
				   0, N_ROOT, HR_CHAINS_NONE);
			for (uint64_t w = hr_bit_next(r.bits, 0, r.nwords); w < r.nwords && !wk->status;
			     w = hr_bit_next(r.bits, w + 1, r.nwords)) {
				uint64_t value = region_word(tb, &r, r.addr + w * tb->ps);

				if (!leads_somewhere(wk, value))
					continue;
				if (node == HR_CHAINS_NONE)
					node = root_node(wk, wk->root_name, wk->root_name_len);
				if (add_root_word(wk, value, node))
					return HR_ENOMEM;
			}
		} else if (obj >= 0) {
			return HR_ENOMEM;
		}
	}
	return wk->status;
}

/* Queued finalizers keep their object and function; "other root" records their pointer. */
static int walk_queued_and_other(struct walker *wk)
{
	const struct scan_tables *tb = &wk->tables;
	size_t n;
	const struct hr_finalizer *q = hr_dump_queued_finalizers(tb->dump, &n);
	const struct hr_other_root *o;
	char name[512];

	for (size_t i = 0; i < n && !wk->status; i++) {
		uint32_t ptr = q[i].obj_type ? hr_image_type_by_runtime_addr(&tb->img,
									      q[i].obj_type) : 0;

		wk->res->sum.roots[HR_ROOT_QUEUED_FINALIZER]++;
		set_root_name(wk, name, sizeof(name), "$queued_finalizer (%s)",
			      rtype_name(wk, q[i].obj_type));
		follow_root_value(wk, q[i].obj, layout_pointee(tb->bin, ptr), M_VALUE);
		follow_root_value(wk, q[i].fn, 0, M_CLOSURE);
	}
	o = hr_dump_other_roots(tb->dump, &n);
	for (size_t i = 0; i < n && !wk->status; i++) {
		wk->res->sum.roots[HR_ROOT_OTHER]++;
		set_root_name(wk, name, sizeof(name), "$other_root (%.*s)",
			      (int)(o[i].description.len < 200 ? o[i].description.len : 200),
			      (const char *)o[i].description.ptr);
		follow_root_value(wk, o[i].ptr, 0, M_VALUE);
	}
	return wk->status;
}

/* --- pass 1: static objects --------------------------------------------------------- */

/* Static objects are looked for in seg (pass 1's data and bss regions) from now on. */
static int statics_begin(struct scan_results *res, struct region seg[2])
{
	struct statics *st = &res->statics;

	for (int k = 0; k < 2; k++) {
		st->started[k] = calloc(hr_bit_words(seg[k].nwords) + 1, sizeof(uint64_t));
		if (!st->started[k])
			return HR_ENOMEM;
	}
	res->segs = seg;
	return HR_OK;
}

static void statics_end(struct scan_results *res)
{
	struct statics *st = &res->statics;

	free(st->started[0]);
	free(st->started[1]);
	free(st->views);
	*st = (struct statics){ 0 };
	res->segs = NULL;
}

/*
 * Walks the static objects typed pointers have led to (follow_static() in walk.c), in
 * the order found, by their views, in the segment's region: their words are ticked like
 * a global's, so they are not taken again as untyped data/bss words. Walking one may
 * find more. (Inline: pass 1 calls it once an object, and most calls find none.)
 */
inline int scan_walk_statics(struct walker *wk)
{
	struct statics *st = &wk->res->statics;

	while (st->done < st->n && !wk->status && !wk->res->pieces_open) {
		struct static_view v = st->views[st->done++];

		wk->holder = HR_SCAN_BY_ROOT; /* the path of what it reaches starts at a root */
		walk_value(wk, &wk->res->segs[v.seg], v.addr, v.type, v.count, v.mode, v.elem_name,
			   v.aux, N_SAME, v.node);
	}
	return wk->status;
}

/* --- pass 1: the heap --------------------------------------------------------------- */

int scan_walk_object(struct walker *wk, const struct work *w)
{
	const struct scan_tables *tb = &wk->tables;
	struct region r;
	uint64_t first;

	if (w->piece ? piece_region(wk, w, &r)
		     : scan_object_region(tb, w->obj, &wk->obj_bits, &wk->obj_bits_cap, &r))
		return HR_ENOMEM;
	if (!bits_any(r.bits, 0, r.nwords))
		return HR_OK; /* nothing inside leads anywhere */
	if (!w->type && w->mode != M_CLOSURE) /* no view: every pointer word is pass 2's */
		return scan_add_leftover(wk, w->obj, w->node, NULL, r.nwords, 0);
	first = scan_words(tb, r.addr - hr_dump_object(tb->dump, w->obj).addr);
	wk->index_base = w->piece & PIECE_CONT ? 10 : 0; /* see N_INDEX */
	walk_value(wk, &r, r.addr - first * tb->ps + w->offset, w->type, w->count, w->mode,
		   w->elem_name, w->aux, N_SAME, w->node);
	wk->index_base = 0;
	if (wk->status)
		return wk->status;
	if (bits_any(r.bits, 0, r.nwords))
		return scan_add_leftover(wk, w->obj, w->node, r.bits, r.nwords,
					 w->piece ? LEFTOVER_PART | (uint32_t)first : 0);
	return HR_OK;
}

int hr_scan_pass1(struct hr_scan *s, struct hr_error *err)
{
	struct walker *wk = &s->wk;
	struct region seg[2] = { 0 };
	int rc;

	if ((rc = segment_region(&s->ctx.tables, hr_dump_data(s->ctx.tables.dump), &seg[0])) ||
	    (rc = segment_region(&s->ctx.tables, hr_dump_bss(s->ctx.tables.dump), &seg[1])))
		goto out;
	/*
	 * Root words for pass 2 are kept in this order too: data and bss, then frames. Static
	 * objects the globals lead to are walked before the untyped data/bss words are taken;
	 * those found later (from frames or heap objects) are walked as they come, before
	 * the next heap object, their words then already pass 2 roots too (reaching nothing
	 * new: the typed walk came first).
	 */
	if ((rc = statics_begin(&s->res, seg)) || (rc = walk_globals(wk, seg)) ||
	    (rc = scan_walk_statics(wk)) || (rc = leftover_segment_words(wk, &seg[0], "data")) ||
	    (rc = leftover_segment_words(wk, &seg[1], "bss")) ||
	    (rc = walk_data_root_pointers(wk)) || (rc = walk_goroutines(wk)) ||
	    (rc = walk_stack_root_pointers(wk)) || (rc = walk_finalizers(wk)) ||
	    (rc = walk_queued_and_other(wk)))
		goto out;
	if (s->ctx.roots_walked)
		s->ctx.roots_walked(s->ctx.roots_walked_ctx, s);
	rc = pass1_walk_heap(wk);
out:
	walker_add_counts(wk, &s->res);
	statics_end(&s->res);
	free(seg[0].bits);
	free(seg[1].bits);
	if (rc)
		hr_error_set(err, rc, rc == HR_ENOMEM ? "out of memory in the typed walk (pass 1)"
						      : "the typed walk (pass 1) failed");
	return rc;
}

/* --- pass 2 ------------------------------------------------------------------------- */

/* Charges what value leads to (if new) to *node, made from parent on first use. */
static int reach_untyped(struct walker *wk, uint64_t value, uint32_t *node, uint32_t parent)
{
	struct scan_results *res = wk->res;
	uint64_t start, size;
	int64_t i = hr_dump_object_span_at(wk->tables.dump, value, &start, &size);
	uint32_t *slot;

	if (i < 0 || scan_visited(wk, (uint32_t)i))
		return HR_OK;
	if (*node == HR_CHAINS_NONE)
		*node = sub_objects_node(wk, parent);
	scan_claim(wk, (uint32_t)i, size, *node, false);
	slot = hr_array_push((void **)&res->stack2, &res->nstack2, &res->stack2_cap, sizeof(*slot));
	if (!slot)
		return HR_ENOMEM;
	*slot = (uint32_t)i;
	return wk->status;
}

/* Charges what value leads to, and all that leads to, to *node (made as above). */
static int follow_untyped(struct walker *wk, uint64_t value, uint32_t *node, uint32_t parent)
{
	const struct scan_tables *tb = &wk->tables;
	const struct scan_ctx *ctx = wk->ctx;
	int rc;

	if (ctx->record_types) {
		int64_t i = hr_dump_object_at(tb->dump, value);

		if (i < 0 || scan_visited(wk, (uint32_t)i))
			return HR_OK;
		if (*node == HR_CHAINS_NONE)
			*node = sub_objects_node(wk, parent);
		return record_follow(wk, value, *node);
	}
	rc = reach_untyped(wk, value, node, parent);
	return rc ? rc : mark_drain(wk, *node);
}

/* A leftover: the unticked words of one object, charged below its node. */
static int follow_leftover(struct walker *wk, const struct leftover *l)
{
	const struct scan_tables *tb = &wk->tables;
	struct hr_object o = hr_dump_object(tb->dump, l->obj);
	uint64_t nwords = o.size / tb->ps, first = 0;
	uint32_t node = HR_CHAINS_NONE;
	const uint64_t *bits;
	struct region all;
	int rc = HR_OK;

	if (l->bits == LEFTOVER_ALL) { /* its own copy: draining reuses obj_bits */
		if (scan_object_region(tb, l->obj, &wk->task_bits, &wk->task_bits_cap, &all))
			return HR_ENOMEM;
		bits = all.bits;
	} else {
		bits = wk->res->leftover_bits + l->bits;
	}
	if (l->part) { /* a piece's words: their count first */
		first = l->part & ~LEFTOVER_PART;
		nwords = *bits++;
	}
	for (uint64_t w = hr_bit_next(bits, 0, nwords); w < nwords && !rc;
	     w = hr_bit_next(bits, w + 1, nwords))
		rc = follow_untyped(wk, hr_dump_word(tb->dump, o.data + (first + w) * tb->ps),
				    &node, l->node);
	return rc;
}

/* A root word's edge to the object it leads to, if any (hr_scan_keep_root_edges()). */
static void root_word_edge(struct walker *wk, uint64_t value, uint32_t node)
{
	int64_t i = hr_dump_object_at(wk->tables.dump, value);

	if (i >= 0)
		scan_root_edge(wk, node, (uint32_t)i);
}

int hr_scan_pass2(struct hr_scan *s, struct hr_error *err)
{
	struct walker *wk = &s->wk;
	struct scan_results *res = &s->res;
	int rc = HR_OK;

	for (size_t i = 0; i < res->nleftovers && !rc; i++) {
		struct leftover l = res->leftovers[i];

		wk->holder = l.obj;
		wk->cur_goroutine = l.goroutine;
		rc = follow_leftover(wk, &l);
	}
	wk->holder = HR_SCAN_BY_ROOT;
	for (size_t i = 0; i < res->nroot_words && !rc; i++) {
		/* words of roots that are no variable: charged to the root itself */
		uint32_t node = res->root_words[i].node;

		if (s->ctx.keep_root_edges)
			root_word_edge(wk, res->root_words[i].value, node);
		wk->cur_goroutine = res->root_words[i].goroutine;
		rc = follow_untyped(wk, res->root_words[i].value, &node, node);
	}
	wk->cur_goroutine = 0;
	res->sum.unreachable_objects = res->sum.total_objects - res->sum.typed_objects -
				       res->sum.fallback_objects;
	res->sum.unreachable_bytes = res->sum.total_bytes - res->sum.typed_bytes -
				     res->sum.fallback_bytes;
	if (rc)
		hr_error_set(err, rc, rc == HR_ENOMEM ? "out of memory in the fallback walk (pass 2)"
						      : "the fallback walk (pass 2) failed");
	return rc;
}
