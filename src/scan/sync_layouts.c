/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sync_layouts.c - the concurrent containers of Go's sync package, whose internals hold
 * what the user stored in words DWARF does not type (unsafe.Pointer, a trie node to be
 * viewed as one of two types, an untyped pair of words): walked by the layouts their
 * DWARF types spell, with the user's keys, values and pooled objects named under the
 * container and the container's own storage charged to its node, as a map's buckets are.
 *
 *  - sync.Map up to Go 1.23 (and 1.24-1.25 built with GOEXPERIMENT=nosynchashtriemap):
 *    read (atomic.Pointer[readOnly], an atomic.Value up to 1.19) and dirty, maps of
 *    *entry; an entry's p points to a boxed interface{}, the value.
 *  - A hash-trie: internal/sync.HashTrieMap[K,V] (sync.Map from Go 1.24),
 *    internal/concurrent.HashTrieMap (unique, Go 1.23), unique.canonMap (Go 1.25):
 *    root -> indirect{node, ..., parent, children [16]atomic.Pointer[node]}; a *node is
 *    an entry{node, overflow, key, value} or an indirect, as its isEntry byte says.
 *  - sync.Pool: local and victim, unsafe.Pointers to [localSize]poolLocal; a poolLocal
 *    holds private (interface{}) and a chain of dequeues whose vals are sync.eface
 *    pairs of type and data words.
 *
 * Types are recognised once per binary (sync_load_layouts()) by their DWARF names and
 * members; offsets always come from DWARF.
 */
#include <stdlib.h>
#include <string.h>

#include "scan_internal.h"

/* --- recognising the types ---------------------------------------------------------- */

/* The end of the type argument starting at p: its top-level ',' or the closing ']'. */
static const char *arg_end(const char *p)
{
	int depth = 0;

	for (; *p; p++) {
		if (*p == '[' || *p == '{' || *p == '(')
			depth++;
		else if ((*p == ']' || *p == '}' || *p == ')') && depth-- == 0)
			return p;
		else if (*p == ',' && depth == 0)
			return p;
	}
	return p;
}

/* Appends n bytes of src to buf (holding *used of len); false when it does not fit. */
static bool append(char *buf, size_t len, size_t *used, const char *src, size_t n)
{
	if (n >= len - *used)
		return false;
	memcpy(buf + *used, src, n);
	*used += n;
	buf[*used] = '\0';
	return true;
}

/* A type argument as itself, or as the shape generic code's DWARF names it by. */
static bool append_arg(char *buf, size_t len, size_t *used, const char *arg, size_t n,
		       enum type_args as)
{
	if (as == ARGS_AS_IS)
		return append(buf, len, used, arg, n);
	if (as == ARGS_SHAPES_PTR_UINT8 && arg[0] == '*')
		return append(buf, len, used, "go.shape.*uint8", 15);
	return append(buf, len, used, "go.shape.", 9) && append(buf, len, used, arg, n);
}

const char *sync_type_arg(const char *name, unsigned k, size_t *n)
{
	const char *p = strchr(name, '[');

	if (!p)
		return NULL;
	for (p++; *p && *p != ']'; p++) {
		const char *end = arg_end(p);

		if (k-- == 0) {
			*n = (size_t)(end - p);
			return p;
		}
		if (*end != ',')
			return NULL;
		p = end;
	}
	return NULL;
}

size_t sync_sibling_name(const char *name, const char *kind, enum type_args as, char *buf,
			 size_t len)
{
	const char *args = strchr(name, '['), *arg;
	size_t used = 0, n;

	/* "P.node[A,B]" -> "P.<kind>[A,B]", or "P.<kind>[go.shape.A,go.shape.B]" */
	if (!len || !args || (size_t)(args - name) < 5 || memcmp(args - 5, ".node", 5) ||
	    !append(buf, len, &used, name, (size_t)(args - name) - 4) ||
	    !append(buf, len, &used, kind, strlen(kind)) || !append(buf, len, &used, "[", 1))
		return 0;
	for (unsigned k = 0; (arg = sync_type_arg(name, k, &n)); k++)
		if ((k && !append(buf, len, &used, ",", 1)) ||
		    !append_arg(buf, len, &used, arg, n, as))
			return 0;
	return append(buf, len, &used, "]", 1) ? used : 0;
}

/*
 * The P.<kind>[A] sibling of a trie's node type P.node[A] (resolved), else its shape
 * instance: Go 1.27 emits an entry[K,V] that only generic code uses in DWARF by its
 * shape alone (entry[go.shape.interface {},go.shape.interface {}]), laid out the same.
 * A pointer's shape is named for its type (go.shape.*internal/abi.Type in Go 1.26), or
 * go.shape.*uint8: both are tried.
 */
static uint32_t find_sibling(const struct scan_ctx *ctx, const char *node_name, const char *kind,
			     bool *shape)
{
	const struct scan_tables *tb = &ctx->tables;
	static const enum type_args tries[] = { ARGS_AS_IS, ARGS_SHAPES, ARGS_SHAPES_PTR_UINT8 };
	char buf[1024];
	uint32_t id = 0;

	for (size_t k = 0; k < sizeof(tries) / sizeof(tries[0]) && !id; k++) {
		*shape = tries[k] != ARGS_AS_IS;
		if (sync_sibling_name(node_name, kind, tries[k], buf, sizeof(buf)))
			id = scan_resolve(tb, hr_binary_find_type(tb->bin, buf));
	}
	return id && hr_binary_type(tb->bin, id)->shape == HR_SHAPE_STRUCT ? id : 0;
}

/* Whether struct id starts with a node whose isEntry is at offset is_entry. */
static bool starts_with_node(const struct scan_ctx *ctx, uint32_t id, uint64_t is_entry)
{
	const struct scan_tables *tb = &ctx->tables;
	const struct hr_type *t = scan_resolved_type(tb, id);

	for (uint32_t i = 0; i < t->member_count; i++) {
		const struct hr_member *m = hr_binary_member(tb->bin, t->first_member + i);
		const struct hr_member *e = layout_member(tb->bin, m->type, "isEntry");

		if (m->offset == 0 && e && e->offset == is_entry)
			return true;
	}
	return false;
}

/*
 * The type an entry's key (k 0) or value (k 1) is walked as: the member's own, unless
 * the entry is a shape's, whose members have shape types: then the node's type
 * argument by name, if the binary has it.
 */
static uint32_t entry_part(const struct scan_ctx *ctx, const char *node_name,
			   const struct hr_member *m, bool shape, unsigned k)
{
	char buf[1024];
	size_t n;
	const char *arg = shape ? sync_type_arg(node_name, k, &n) : NULL;
	uint32_t id = 0;

	if (arg && n < sizeof(buf)) {
		memcpy(buf, arg, n);
		buf[n] = '\0';
		id = hr_binary_find_type(ctx->tables.bin, buf);
	}
	return id ? id : m->type;
}

/* A trie's node type (struct id named P.node[A] with isEntry), with its siblings. */
static int add_trie(struct scan_ctx *ctx, uint32_t id, size_t *cap)
{
	const struct scan_tables *tb = &ctx->tables;
	const char *name = hr_binary_type(tb->bin, id)->name;
	const struct hr_member *is_entry = layout_member(tb->bin, id, "isEntry"), *over, *key, *val;
	bool shape;
	uint32_t indirect = is_entry ? find_sibling(ctx, name, "indirect", &shape) : 0;
	uint32_t entry = indirect ? find_sibling(ctx, name, "entry", &shape) : 0;
	const struct hr_member *v;

	if (!entry || !starts_with_node(ctx, entry, is_entry->offset) ||
	    !starts_with_node(ctx, indirect, is_entry->offset) ||
	    !(over = layout_member(tb->bin, entry, "overflow")) ||
	    !(key = layout_member(tb->bin, entry, "key")))
		return HR_OK;
	val = layout_member(tb->bin, entry, "value"); /* unique.canonMap's has none */
	v = layout_member(tb->bin, over->type, "v");
	if (hr_array_reserve((void **)&ctx->sync.tries, cap, ctx->sync.ntries + 1,
			     sizeof(*ctx->sync.tries)))
		return HR_ENOMEM;
	ctx->sync.tries[ctx->sync.ntries++] = (struct trie_types){
		.node = id, .indirect = indirect,
		.key_type = entry_part(ctx, name, key, shape, 0),
		.value_type = val ? entry_part(ctx, name, val, shape, 1) : 0,
		.is_entry = is_entry->offset, .overflow = over->offset + (v ? v->offset : 0),
		.key = key->offset, .value = val ? val->offset : 0,
	};
	return HR_OK;
}

const struct trie_types *sync_trie(const struct scan_ctx *ctx, uint32_t id)
{
	id = scan_resolve(&ctx->tables, id);
	for (size_t i = 0; i < ctx->sync.ntries; i++)
		if (ctx->sync.tries[i].node == id || ctx->sync.tries[i].indirect == id)
			return &ctx->sync.tries[i];
	return NULL;
}

/* The type a pointer-like member leads to: *T, or sync/atomic.Pointer[T]'s T. */
static uint32_t member_target(const struct scan_ctx *ctx, const struct hr_member *m)
{
	const struct scan_tables *tb = &ctx->tables;
	uint32_t id = scan_resolve(tb, m->type);
	uint32_t ptr = layout_atomic_pointer(tb->bin, id);

	return layout_pointee(tb->bin, ptr ? ptr : id);
}

/* A struct with a root pointing to a trie's indirect node: the trie map itself. */
static bool is_trie_map(const struct scan_ctx *ctx, uint32_t id)
{
	const struct scan_tables *tb = &ctx->tables;
	const struct hr_member *root = layout_member(tb->bin, id, "root");
	const struct trie_types *tt;

	if (!root)
		return false;
	tt = sync_trie(ctx, member_target(ctx, root));
	return tt && tt->indirect == scan_resolve(tb, member_target(ctx, root));
}

static bool has_members(const struct scan_ctx *ctx, uint32_t id, const char *a, const char *b)
{
	const struct scan_tables *tb = &ctx->tables;

	return layout_member(tb->bin, id, a) && layout_member(tb->bin, id, b);
}

/* The layout of a resolved struct type by its name, before tries and references. */
static uint8_t named_layout(const struct scan_ctx *ctx, uint32_t id)
{
	const struct scan_tables *tb = &ctx->tables;
	const char *name = hr_binary_type(tb->bin, id)->name;

	if (!strcmp(name, "sync.Map"))
		return SL_SYNC_MAP;
	if (!strcmp(name, "sync.entry") && layout_member(tb->bin, id, "p"))
		return SL_MAP_ENTRY;
	if (!strcmp(name, "sync.Pool") && has_members(ctx, id, "local", "localSize"))
		return SL_POOL;
	if (!strcmp(name, "sync.eface") && has_members(ctx, id, "typ", "val"))
		return SL_EFACE;
	return SL_NONE;
}

static uint8_t derived_layout(const struct scan_ctx *ctx, uint32_t id)
{
	const struct scan_tables *tb = &ctx->tables;
	const struct hr_type *t = hr_binary_type(tb->bin, id);

	if (t->kind == HR_KIND_PTR && t->target &&
	    tb->types[scan_resolve(tb, t->target)].layout == SL_MAP_ENTRY)
		return SL_ENTRY_REF;
	if (t->shape != HR_SHAPE_STRUCT)
		return SL_NONE;
	if (sync_trie(ctx, id) && sync_trie(ctx, id)->node == id)
		return SL_TRIE_NODE;
	return is_trie_map(ctx, id) ? SL_TRIE_MAP : SL_NONE;
}

int sync_load_layouts(struct scan_ctx *ctx)
{
	const struct scan_tables *tb = &ctx->tables;
	size_t cap = 0;

	for (uint32_t id = 0; id < tb->ntypes; id++) {
		const struct hr_type *t = hr_binary_type(tb->bin, id);

		if (tb->types[id].resolved != id || t->shape != HR_SHAPE_STRUCT)
			continue;
		tb->types[id].layout = named_layout(ctx, id);
		if (!strcmp(t->name, "sync.poolLocal"))
			ctx->sync.pool_local = id;
		if (strchr(t->name, '[') && add_trie(ctx, id, &cap))
			return HR_ENOMEM;
	}
	for (uint32_t id = 0; id < tb->ntypes; id++) {
		const struct hr_type *t = hr_binary_type(tb->bin, id);

		if (!ctx->sync.any && t->kind == HR_KIND_INTERFACE && !strcmp(t->name, "interface {}"))
			ctx->sync.any = id;
		if (tb->types[id].resolved == id && !tb->types[id].layout)
			tb->types[id].layout = derived_layout(ctx, id);
	}
	for (uint32_t id = 0; id < tb->ntypes; id++)
		tb->types[id].layout = tb->types[tb->types[id].resolved].layout;
	return HR_OK;
}

/* --- the walk ----------------------------------------------------------------------- */

/* A trie's entry: its overflow entry is storage; key and value are named. */
static enum sync_start walk_trie_entry(struct walker *wk, uint32_t i,
				       const struct trie_types *tt)
{
	uint64_t addr = wk->frames[i].addr;

	wk->frames[i].mode = M_DONE;
	follow_word(wk, addr + tt->overflow, tt->node, 0, M_TRIE, N_SAME, 0, true, i);
	if (tt->value_type)
		push_child(wk, i, addr + tt->value, tt->value_type, M_VALUE, N_MAPVAL, 0,
			   tt->value_type, 0);
	push_child(wk, i, addr + tt->key, tt->key_type, M_VALUE, N_MAPKEY, 0, tt->key_type, 0);
	return SYNC_KEEP;
}

/* A *node of a trie, an entry or an indirect as its isEntry byte says. */
static enum sync_start start_trie_node(struct walker *wk, uint32_t i)
{
	struct vframe *f = &wk->frames[i];
	const struct trie_types *tt = sync_trie(wk->ctx, f->type);
	const struct region *r = wk->region;
	uint64_t at = f->addr + (tt ? tt->is_entry : 0);

	if (!tt || at < r->addr || at - r->addr >= r->len)
		return SYNC_POP;
	if (r->data[at - r->addr])
		return walk_trie_entry(wk, i, tt);
	f->type = tt->indirect;
	f->mode = M_TRIE;
	return SYNC_GO_ON;
}

/* A sync.eface in a pool's dequeue: an interface{} by its type word, a pooled value. */
static enum sync_start start_eface(struct walker *wk, uint32_t i)
{
	struct vframe *f = &wk->frames[i];

	if (f->mode == M_POOL) {
		f->name = N_POOLED;
		f->node = HR_CHAINS_NONE;
		f->a = 0;
		f->name_type = f->type;
	}
	f->mode = M_VALUE;
	walk_iface(wk, i);
	return wk->frames[i].mode == M_DONE ? SYNC_KEEP : SYNC_POP;
}

enum sync_start sync_start_frame(struct walker *wk, uint32_t i)
{
	struct vframe *f = &wk->frames[i];

	switch (scan_type_layout(&wk->tables, f->type)) {
	case SL_TRIE_NODE:
		return start_trie_node(wk, i);
	case SL_EFACE:
		return start_eface(wk, i);
	case SL_SYNC_MAP:
	case SL_MAP_ENTRY:
		f->mode = M_SYNC;
		break;
	case SL_TRIE_MAP:
		f->mode = M_TRIE;
		break;
	case SL_POOL:
		f->mode = M_POOL;
		break;
	default:
		break;
	}
	return SYNC_GO_ON;
}

/*
 * sync.Pool's local or victim: [localSize]poolLocal (or victimSize), the pool's storage.
 * False for its other members.
 */
static bool pool_locals(struct walker *wk, uint32_t i, const struct hr_member *m)
{
	const struct scan_tables *tb = &wk->tables;
	const struct scan_ctx *ctx = wk->ctx;
	const struct vframe *f = &wk->frames[i];
	const struct hr_member *size;

	if (!strcmp(m->name, "local"))
		size = layout_member(tb->bin, f->type, "localSize");
	else if (!strcmp(m->name, "victim"))
		size = layout_member(tb->bin, f->type, "victimSize");
	else
		return false;
	if (size && ctx->sync.pool_local) {
		uint64_t n = region_word(tb, wk->region, f->addr + size->offset);

		if (n)
			follow_word(wk, f->addr + m->offset, ctx->sync.pool_local, n, M_POOL, N_SAME, 0,
				    true, i);
	}
	return true;
}

/*
 * A Go <= 1.23 sync.Map entry's p (unsafe.Pointer up to Go 1.19, else
 * atomic.Pointer[interface{}]): the boxed interface{} is the map's storage, the value
 * in it is named $mapval by its dynamic type.
 */
static void map_entry_value(struct walker *wk, uint32_t i, const struct hr_member *m)
{
	const struct scan_tables *tb = &wk->tables;
	const struct scan_ctx *ctx = wk->ctx;
	const struct hr_member *v = layout_member(tb->bin, m->type, "v");
	uint64_t addr = wk->frames[i].addr + m->offset + (v ? v->offset : 0);

	if (ctx->sync.any)
		follow_word(wk, addr, ctx->sync.any, 1, M_VALUE, N_MAPVAL, 0, true, i);
}

void sync_next_member(struct walker *wk, uint32_t i, uint32_t index)
{
	const struct scan_tables *tb = &wk->tables;
	const struct vframe *f = &wk->frames[i];
	const struct hr_member *m = hr_binary_member(tb->bin, index);
	uint64_t addr = f->addr + m->offset;
	unsigned role = scan_member_role(tb, index), kind = scan_resolved_type(tb, m->type)->kind;
	uint8_t mode = f->mode, layout = scan_type_layout(tb, f->type);
	uint32_t ptr;

	if (layout == SL_POOL && pool_locals(wk, i, m))
		return;
	if (layout == SL_MAP_ENTRY && !strcmp(m->name, "p"))
		map_entry_value(wk, i, m);
	else if (role == ROLE_V && (ptr = layout_atomic_pointer(tb->bin, f->type)))
		push_child(wk, i, addr, ptr, mode, N_SAME, 0, 0, 0);
	else if (mode == M_POOL && kind == HR_KIND_INTERFACE)
		push_child(wk, i, addr, m->type, M_VALUE, N_POOLED, 0, m->type, 0);
	else if (mode == M_POOL && kind == HR_KIND_FUNC) /* Pool.New */
		push_known(wk, i, addr, m->type, M_VALUE, N_FIELD, index, m->type, 0);
	else
		push_known(wk, i, addr, m->type, mode, N_SAME, 0, 0, 0);
}
