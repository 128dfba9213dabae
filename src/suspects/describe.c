/* SPDX-License-Identifier: Apache-2.0 */
/*
 * describe.c - objects as a user would name them, for the suspects (see suspects.h): a
 * map and its entries, a slice's backing array and its length, a list and its nodes, a
 * channel and its buffer; the types of what a suspect retains; the hops of its path.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suspects_internal.h"

#define KEY_ARRAY 0x80000000u   /* as the result's: an array of the type */
#define KEY_CLOSURE 0x40000000u /* a closure of the function index in the rest */
#define KEY_STRING 0x3fffffffu  /* a string's bytes */
#define KEY_UNKNOWN 0x3ffffffeu /* reached by bitmap only */
#define LIST_MIN 3              /* nodes of one type in a row that make a list */

char *str_printf(const char *fmt, ...)
{
	va_list ap;
	int n;
	char *s;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !(s = malloc((size_t)n + 1)))
		return NULL;
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

static const struct hr_binary *binary_of(const struct suspect_ctx *c)
{
	return c->src->img ? c->src->img->bin : NULL;
}

static uint32_t graph_roots(const struct suspect_ctx *c)
{
	return hr_heap_dom_root_count(c->src->dominators);
}

uint32_t object_type_key(const struct suspect_ctx *c, uint32_t obj)
{
	bool array;
	uint32_t t = hr_result_type_of(c->src->result, obj, &array);
	int64_t fn;

	if (t)
		return t | (array ? KEY_ARRAY : 0);
	if ((fn = hr_result_closure_of(c->src->result, obj)) >= 0 && fn < KEY_CLOSURE)
		return KEY_CLOSURE | (uint32_t)fn;
	return hr_result_is_string_data(c->src->result, obj) ? KEY_STRING : KEY_UNKNOWN;
}

static const char *type_name(const struct suspect_ctx *c, uint32_t id)
{
	const struct hr_binary *bin = binary_of(c);
	const char *name = bin && id ? hr_binary_type(bin, id)->name : NULL;

	return name && name[0] ? name : "?";
}

char *type_key_name(const struct suspect_ctx *c, uint32_t key)
{
	const struct hr_binary *bin = binary_of(c);

	if (key == KEY_STRING)
		return strdup("string bytes");
	if (key == KEY_UNKNOWN)
		return strdup("? (by bitmap)");
	if ((key & KEY_ARRAY) == 0 && (key & KEY_CLOSURE))
		return str_printf("closure %s",
				  bin && (key & ~KEY_CLOSURE) < hr_binary_func_count(bin)
					  ? hr_binary_func(bin, key & ~KEY_CLOSURE)->name
					  : "?");
	if (key & KEY_ARRAY)
		return str_printf("[]%s", type_name(c, key & ~KEY_ARRAY));
	return strdup(type_name(c, key));
}

const char *root_name(const struct suspect_ctx *c, uint32_t chain)
{
	const struct hr_chains *tree = c->src->tree;

	return chain < hr_chains_count(tree) ? hr_chains_name(tree, hr_chains_node(tree, chain)->name)
					     : "?";
}

/*
 * The object whose word reached object obj, or HR_SCAN_BY_ROOT: the scan's, when it
 * kept holders; else prev, obj's predecessor on the path being described (a graph
 * node: a root variable or an object), when there is one (HR_SCAN_NOT_REACHED if not).
 */
static uint32_t holder_of(const struct suspect_ctx *c, uint32_t obj, uint32_t prev)
{
	uint32_t h = hr_result_reached_by(c->src->result, obj).holder;

	if (h != HR_SCAN_HOLDER_UNKNOWN)
		return h;
	if (prev == HR_DOM_NONE || prev == 0)
		return HR_SCAN_NOT_REACHED;
	return prev <= graph_roots(c) ? HR_SCAN_BY_ROOT : prev - graph_roots(c) - 1;
}

/*
 * The static type of the pointer word that reached object obj (from prev: see
 * holder_of()): T of its chain's name
 * `x. (T)`, or the type of the global whose word it was; only when that word was
 * outside obj's chain node (what the same node reached next, a map's tables, a list's
 * next nodes, was not reached by a word of that type). NULL when nothing says.
 */
static const char *static_type(const struct suspect_ctx *c, uint32_t obj, uint32_t prev,
			       char *buf, size_t cap)
{
	struct hr_reached_by by = hr_result_reached_by(c->src->result, obj);
	const struct hr_chains *tree = c->src->tree;
	const struct hr_binary *bin = binary_of(c);
	const char *name, *open;
	size_t len;

	if (by.node == HR_CHAINS_NONE || by.node >= hr_chains_count(tree))
		return NULL;
	by.holder = holder_of(c, obj, prev);
	if (by.holder != HR_SCAN_BY_ROOT &&
	    (by.holder >= hr_dump_object_count(c->src->model) ||
	     hr_result_reached_by(c->src->result, by.holder).node == by.node))
		return NULL;
	name = hr_chains_name(tree, hr_chains_node(tree, by.node)->name);
	len = strlen(name);
	if ((open = strstr(name, ". (")) && len && name[len - 1] == ')') {
		snprintf(buf, cap, "%.*s", (int)(name + len - 1 - (open + 3)), open + 3);
		return buf;
	}
	if (by.holder == HR_SCAN_BY_ROOT && hr_chains_node(tree, by.node)->parent == HR_CHAINS_TOP &&
	    bin) {
		const struct hr_global *g = hr_binary_find_global(bin, name);

		if (g && g->type && hr_binary_type(bin, g->type)->name[0]) {
			snprintf(buf, cap, "%s", hr_binary_type(bin, g->type)->name);
			return buf;
		}
	}
	return NULL;
}

static bool starts_with(const char *s, const char *prefix)
{
	return s && !strncmp(s, prefix, strlen(prefix));
}

/* Whether the ps bytes at addr lie inside [base, base + len): no wrap-around. */
static bool word_inside(uint64_t addr, uint64_t base, uint64_t len, unsigned ps)
{
	return addr >= base && addr - base <= len && len - (addr - base) >= ps;
}

/* A word of the heap, a frame, data or bss at run-time address addr. */
static bool read_word(const struct suspect_ctx *c, uint64_t addr, uint64_t *v)
{
	const struct hr_dump *d = c->src->model;
	unsigned ps = hr_dump_params(d)->ptr_size;
	const struct hr_segment *segs[2] = { hr_dump_data(d), hr_dump_bss(d) };
	int64_t i = hr_dump_object_at(d, addr);
	size_t nf;
	const struct hr_frame *f = hr_dump_frames(d, &nf);

	if (i >= 0) {
		struct hr_object o = hr_dump_object(d, (size_t)i);

		if (!word_inside(addr, o.addr, o.size, ps))
			return false;
		*v = hr_dump_word(d, o.data + (addr - o.addr));
		return true;
	}
	for (size_t k = 0; k < nf; k++)
		if (word_inside(addr, f[k].sp, f[k].contents.len, ps)) {
			*v = hr_dump_word(d, f[k].contents.ptr + (addr - f[k].sp));
			return true;
		}
	for (int k = 0; k < 2; k++) {
		const struct hr_segment *s = segs[k];

		if (s && s->present && word_inside(addr, s->addr, s->contents.len, ps)) {
			*v = hr_dump_word(d, s->contents.ptr + (addr - s->addr));
			return true;
		}
	}
	return false;
}

/* A word of a frame of the function root (a frame variable) is named after that points into o. */
static bool frame_word(const struct suspect_ctx *c, const char *root, const struct hr_object *o,
		       uint64_t *addr)
{
	const struct hr_dump *d = c->src->model;
	unsigned ps = hr_dump_params(d)->ptr_size;
	size_t nf;
	const struct hr_frame *f = hr_dump_frames(d, &nf);

	for (size_t k = 0; k < nf; k++) {
		if (!hr_frame_holds_root(&f[k], root))
			continue;
		for (uint64_t off = 0; ps && off + ps <= f[k].contents.len; off += ps) {
			uint64_t v = hr_dump_word(d, f[k].contents.ptr + off);

			if (v >= o->addr && v - o->addr < o->size && off + 3 * ps <= f[k].contents.len) {
				*addr = f[k].sp + off;
				return true;
			}
		}
	}
	return false;
}

/* The run-time address of the word that reached obj (its holder's, or a global's). */
static bool holder_word(const struct suspect_ctx *c, uint32_t obj, uint32_t prev, uint64_t *addr)
{
	struct hr_reached_by by = { hr_result_reached_by(c->src->result, obj).node,
				    holder_of(c, obj, prev) };
	const struct hr_binary *bin = binary_of(c);
	struct hr_object o = hr_dump_object(c->src->model, obj);
	uint64_t off;

	if (by.holder < hr_dump_object_count(c->src->model)) {
		if (!hr_dump_word_into(c->src->model, by.holder, obj, &off))
			return false;
		*addr = hr_dump_object(c->src->model, by.holder).addr + off;
		return true;
	}
	if (by.holder == HR_SCAN_BY_ROOT && bin && by.node < hr_chains_count(c->src->tree)) {
		const struct hr_global *g = hr_binary_find_global(bin, root_name(c, by.node));
		uint64_t v;

		if (!g || !g->type)
			return frame_word(c, root_name(c, by.node), &o, addr);
		*addr = hr_image_runtime(c->src->img, g->addr);
		return read_word(c, *addr, &v) && v >= o.addr && v - o.addr < o.size;
	}
	return false;
}

/* A member's value of object obj read as struct type id (count, qcount...). */
static bool member_value(const struct suspect_ctx *c, uint32_t obj, uint32_t id,
			 const char *member, uint64_t *v)
{
	const struct hr_binary *bin = binary_of(c);
	const struct hr_member *m = bin ? hr_binary_find_member(bin, id, member) : NULL;
	struct hr_object o = hr_dump_object(c->src->model, obj);

	return m && read_word(c, o.addr + m->offset, v);
}

static bool is_map_header(const char *walk)
{
	return !strcmp(walk, "runtime.hmap") || starts_with(walk, "hash<") ||
	       starts_with(walk, "map<") || !strcmp(walk, "internal/runtime/maps.Map");
}

/* The object's size in elements of the array's element type, and its non-nil words. */
/*
 * The room of object obj in elements of type elem (after its malloc header: the value
 * offset), and its non-nil pointer words.
 */
static void array_counts(const struct suspect_ctx *c, uint32_t obj, uint32_t elem,
			 uint64_t *room, uint64_t *nonnil)
{
	const struct hr_binary *bin = binary_of(c);
	struct hr_object o = hr_dump_object(c->src->model, obj);
	uint64_t es = bin ? hr_binary_type(bin, hr_binary_resolve_typedef(bin, elem))->size : 0;
	uint64_t start = hr_result_value_offset(c->src->result, c->src->model, obj);
	unsigned ps = hr_dump_params(c->src->model)->ptr_size;

	*room = es && o.size > start ? (o.size - start) / es : 0;
	*nonnil = 0;
	for (uint64_t off = start; ps && off + ps <= o.size; off += ps)
		*nonnil += hr_dump_heap_ptr_bit(c->src->model, o.addr + off) &&
			   hr_dump_word(c->src->model, o.data + off) != 0;
}

/*
 * The length and capacity of the slice whose header holds the word that reached obj:
 * the header's pointer at the array's first element, length <= capacity <= the room.
 */
static bool slice_header(const struct suspect_ctx *c, uint32_t obj, uint32_t prev, uint64_t room,
			 uint64_t *len, uint64_t *cap)
{
	unsigned ps = hr_dump_params(c->src->model)->ptr_size;
	uint64_t at, ptr, first = hr_dump_object(c->src->model, obj).addr +
				  hr_result_value_offset(c->src->result, c->src->model, obj);

	return holder_word(c, obj, prev, &at) && read_word(c, at, &ptr) && ptr == first &&
	       read_word(c, at + ps, len) && read_word(c, at + 2 * ps, cap) && *len <= *cap &&
	       *cap <= room && *cap;
}

/* Whether a value of type id is one pointer word (a pointer, map, channel, func). */
static bool pointer_shaped(const struct suspect_ctx *c, uint32_t id)
{
	const struct hr_binary *bin = binary_of(c);
	const struct hr_type *t;

	if (!bin)
		return false;
	t = hr_binary_type(bin, hr_binary_resolve_typedef(bin, id));
	return t->shape == HR_SHAPE_POINTER || t->kind == HR_KIND_PTR || t->kind == HR_KIND_MAP ||
	       t->kind == HR_KIND_CHAN || t->kind == HR_KIND_FUNC ||
	       t->kind == HR_KIND_UNSAFE_POINTER;
}

static int describe_slice(const struct suspect_ctx *c, uint32_t obj, uint32_t prev, uint32_t elem,
			  const char *st, struct hr_object_description *d)
{
	uint64_t room, nonnil, len, cap;

	array_counts(c, obj, elem, &room, &nonnil);
	d->kind = HR_PILE_SLICE;
	d->type = starts_with(st, "[]") ? strdup(st) : str_printf("[]%s", type_name(c, elem));
	if (slice_header(c, obj, prev, room, &len, &cap)) {
		d->count = len;
		d->what = str_printf("%s of length %" PRIu64 " (capacity %" PRIu64 ")",
				     d->type ? d->type : "?", len, cap);
	} else if (pointer_shaped(c, elem)) {
		d->count = nonnil;
		d->what = str_printf("%s backing array with room for %" PRIu64 ", %" PRIu64 " set",
				     d->type ? d->type : "?", room, nonnil);
	} else {
		d->count = room;
		d->what = str_printf("%s backing array with room for %" PRIu64,
				     d->type ? d->type : "?", room);
	}
	return d->type && d->what ? HR_OK : HR_ENOMEM;
}

/* How many objects of obj's type follow one another down the biggest children from it. */
static uint64_t list_length(const struct suspect_ctx *c, uint32_t node)
{
	uint32_t key = object_type_key(c, node - graph_roots(c) - 1);
	uint64_t n = 1;

	if (!c->big)
		return 1;
	for (uint32_t v = biggest_child(c, node); v != HR_DOM_NONE && v > graph_roots(c);
	     v = biggest_child(c, v)) {
		if (object_type_key(c, v - graph_roots(c) - 1) != key)
			break;
		n++;
	}
	return n;
}

static int describe_list(const struct suspect_ctx *c, uint32_t node, const char *walk,
			 uint64_t n, struct hr_object_description *d)
{
	uint32_t obj = node - graph_roots(c) - 1, next = biggest_child(c, node) - graph_roots(c) - 1;
	const struct hr_binary *bin = binary_of(c);
	char field[128] = "";
	uint64_t off;

	if (hr_dump_word_into(c->src->model, obj, next, &off))
		hr_result_word_name(c->src->result, c->src->model, bin, obj, off, field,
				    sizeof(field));
	d->kind = HR_PILE_LIST;
	d->count = n;
	d->type = strdup(walk);
	d->what = field[0] ? str_printf("a list of %" PRIu64 " %s linked by %s", n, walk, field)
				 : str_printf("a list of %" PRIu64 " %s", n, walk);
	return d->type && d->what ? HR_OK : HR_ENOMEM;
}

static int describe_container(const struct suspect_ctx *c, uint32_t obj, uint32_t id,
			      const char *walk, const char *st, struct hr_object_description *d)
{
	uint64_t n = 0, capacity = 0;

	if (is_map_header(walk) || starts_with(st, "map[")) {
		d->kind = HR_PILE_MAP;
		if (!member_value(c, obj, id, "count", &n))
			member_value(c, obj, id, "used", &n);
		d->count = n;
		d->type = strdup(starts_with(st, "map[") ? st : "map");
		d->what = str_printf("%s with %" PRIu64 " entries",
					   d->type ? d->type : "?", n);
	} else {
		d->kind = HR_PILE_CHAN;
		member_value(c, obj, id, "qcount", &n);
		member_value(c, obj, id, "dataqsiz", &capacity);
		d->count = n;
		d->type = strdup(starts_with(st, "chan") ? st : "chan");
		d->what = str_printf("%s with %" PRIu64 " elements in its buffer (capacity %"
					   PRIu64 ")", d->type ? d->type : "?", n, capacity);
	}
	return d->type && d->what ? HR_OK : HR_ENOMEM;
}

/* Object node's description; prev: its predecessor on the path described, or HR_DOM_NONE. */
static int describe_object(const struct suspect_ctx *c, uint32_t node, uint32_t prev,
			   struct hr_object_description *d)
{
	uint32_t obj = node - graph_roots(c) - 1, key = object_type_key(c, obj);
	char stbuf[512], *walk = type_key_name(c, key);
	const char *st = static_type(c, obj, prev, stbuf, sizeof(stbuf));
	uint64_t n;
	int rc;

	if (!walk)
		return HR_ENOMEM;
	if (key & KEY_ARRAY)
		rc = describe_slice(c, obj, prev, key & ~KEY_ARRAY, st, d);
	else if (!(key & KEY_CLOSURE) && key < KEY_UNKNOWN &&
		 (is_map_header(walk) || starts_with(st, "map[") ||
		  !strcmp(walk, "runtime.hchan") || starts_with(st, "chan")))
		rc = describe_container(c, obj, key, walk, st, d);
	else if (key < KEY_UNKNOWN && (n = list_length(c, node)) >= LIST_MIN)
		rc = describe_list(c, node, walk, n, d);
	else
		rc = (d->type = strdup(walk)) && (d->what = strdup(walk)) ? HR_OK
										: HR_ENOMEM;
	free(walk);
	return rc;
}

int describe_shared_tops(const struct suspect_ctx *c, const uint32_t *tops, uint32_t ntops,
			 uint32_t biggest, struct hr_suspect *s)
{
	uint32_t obj = biggest - graph_roots(c) - 1, key = object_type_key(c, obj);
	struct hr_object o = hr_dump_object(c->src->model, obj);
	uint64_t same = 0;

	for (uint32_t i = 0; i < ntops; i++)
		same += object_type_key(c, tops[i] - graph_roots(c) - 1) == key;
	s->point.kind = HR_PILE_SHARED;
	s->point.count = ntops;
	s->point.addr = o.addr;
	s->point.size = o.size;
	s->point.bytes = s->bytes;
	s->point.objects = s->objects;
	if (!(s->point.type = type_key_name(c, key)))
		return HR_ENOMEM;
	/* the writers add " at" the address: the biggest's */
	if (same == ntops)
		s->point.what = str_printf("%" PRIu32 " %s that these roots share, none keeping "
					   "%.0f%% of the memory; the biggest", ntops,
					   s->point.type, 100.0 * HR_SUSPECT_KEEP_RATIO);
	else
		s->point.what = str_printf("%" PRIu32 " objects that these roots share (%" PRIu64
					   " of them %s), none keeping %.0f%% of the memory; "
					   "the biggest", ntops, same, s->point.type,
					   100.0 * HR_SUSPECT_KEEP_RATIO);
	s->point.chain = hr_chains_text(c->src->tree,
					hr_result_reached_by(c->src->result, obj).node);
	return s->point.what && s->point.chain ? HR_OK : HR_ENOMEM;
}

int describe_point(const struct suspect_ctx *c, uint32_t point, uint32_t prev,
		   struct hr_suspect *s)
{
	struct hr_dom_node n = hr_heap_dom_node(c->src->dominators, point);
	struct hr_object_description d = { 0 };
	int rc;

	s->point.bytes = n.retained_bytes;
	s->point.objects = n.retained_objects;
	if (point <= graph_roots(c)) { /* the root holds the memory by many words of its own */
		s->point.kind = HR_PILE_OBJECT;
		s->point.type = strdup(root_name(c, n.root));
		s->point.what = str_printf("%s itself: what it holds is spread over the objects "
					   "its words point to, none keeping %.0f%% of it",
					   root_name(c, n.root), 100.0 * HR_SUSPECT_KEEP_RATIO);
		s->point.chain = strdup(root_name(c, n.root));
		return s->point.type && s->point.what && s->point.chain ? HR_OK : HR_ENOMEM;
	}
	s->point.addr = hr_dump_object(c->src->model, n.object).addr;
	s->point.size = hr_dump_object(c->src->model, n.object).size;
	if (!(s->point.chain = hr_chains_text(c->src->tree, hr_result_reached_by(c->src->result, n.object).node)))
		return HR_ENOMEM;
	rc = describe_object(c, point, prev, &d);
	s->point.kind = d.kind;
	s->point.type = d.type;
	s->point.what = d.what;
	s->point.count = d.count;
	return rc;
}

int hr_describe_object(const struct hr_suspect_sources *src, uint32_t obj,
		       struct hr_object_description *d)
{
	struct suspect_ctx c = { .src = src };

	*d = (struct hr_object_description){ 0 };
	if (obj >= hr_dump_object_count(src->model))
		return HR_EUSAGE;
	return describe_object(&c, hr_heap_dom_object_node(src->dominators, obj), HR_DOM_NONE, d);
}

void hr_object_description_release(struct hr_object_description *d)
{
	free(d->type);
	free(d->what);
	*d = (struct hr_object_description){ 0 };
}

int describe_hop(const struct suspect_ctx *c, uint32_t prev, uint32_t node,
		 struct hr_suspect_hop *hop)
{
	const struct hr_binary *bin = binary_of(c);
	uint32_t obj, pobj;
	char field[256] = "", stbuf[512];
	const char *st;
	uint64_t off;

	if (node <= graph_roots(c)) {
		uint32_t chain = hr_heap_graph_root_chain(hr_heap_dom_graph(c->src->dominators), node);

		hop->field = strdup("");
		hop->type = strdup(root_name(c, chain));
		return hop->field && hop->type ? HR_OK : HR_ENOMEM;
	}
	obj = node - graph_roots(c) - 1;
	hop->addr = hr_dump_object(c->src->model, obj).addr;
	hop->size = hr_dump_object(c->src->model, obj).size;
	if (prev != HR_DOM_NONE && prev > graph_roots(c)) {
		pobj = prev - graph_roots(c) - 1;
		if (hr_dump_word_into(c->src->model, pobj, obj, &off)) {
			hr_result_word_name(c->src->result, c->src->model, bin, pobj, off, field,
					    sizeof(field));
			if (!field[0])
				snprintf(field, sizeof(field), "+%" PRIu64, off);
		}
	}
	st = static_type(c, obj, prev, stbuf, sizeof(stbuf));
	hop->field = strdup(field);
	if (st && (starts_with(st, "map[") || starts_with(st, "chan") || starts_with(st, "[]")))
		hop->type = strdup(st);
	else
		hop->type = type_key_name(c, object_type_key(c, obj));
	return hop->field && hop->type ? HR_OK : HR_ENOMEM;
}

uint64_t count_frame_goroutines(const struct suspect_ctx *c, const char *root, uint64_t *leaked)
{
	size_t nf;
	const struct hr_frame *f = hr_dump_frames(c->src->model, &nf);
	const struct hr_goroutine_leaks *l = c->src->leaks;
	uint64_t n = 0;
	uint32_t last = UINT32_MAX;

	*leaked = 0;
	for (size_t k = 0; k < nf; k++) {
		if (!hr_frame_holds_root(&f[k], root) || f[k].goroutine == last)
			continue;
		last = f[k].goroutine;
		n++;
		*leaked += l && f[k].goroutine < l->count && l->verdict[f[k].goroutine] == HR_LEAK_YES;
	}
	return n;
}
