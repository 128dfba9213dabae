/* SPDX-License-Identifier: Apache-2.0 */
/*
 * go_layouts.c - what the scanner must know about how Go lays out values, taken from
 * the binary's own DWARF and the dump's build version rather than from any one Go
 * release: which typedefs to look through, interface type words and itabs, which types
 * an interface stores directly, malloc headers (Go >= 1.22), sync/atomic.Pointer[T].
 * Map and channel internals are read by member name from the DWARF types the compiler
 * emits for them (hash<K,V>/bucket<K,V> up to Go 1.23, map<K,V>/table<K,V>/group from
 * Go 1.24, hchan<T>): see walk.c.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "scan_internal.h"

uint32_t layout_resolve(const struct hr_binary *bin, uint32_t id)
{
	for (int i = 0; i < 64; i++) {
		const struct hr_type *t = hr_binary_type(bin, id);

		/*
		 * Go names maps, channels and interfaces with a typedef whose target is the
		 * runtime structure (*hash<K,V>, *hchan<T>, runtime.eface): keep the typedef,
		 * it carries the key and element types.
		 */
		if (t->shape != HR_SHAPE_TYPEDEF || t->kind == HR_KIND_MAP ||
		    t->kind == HR_KIND_CHAN || t->kind == HR_KIND_INTERFACE || !t->target)
			return id;
		id = t->target;
	}
	return 0;
}

const struct hr_member *layout_member(const struct hr_binary *bin, uint32_t id, const char *name)
{
	const struct hr_type *t;

	id = hr_binary_resolve_typedef(bin, id);
	t = hr_binary_type(bin, id);
	for (uint32_t i = 0; i < t->member_count; i++) {
		const struct hr_member *m = hr_binary_member(bin, t->first_member + i);

		if (!strcmp(m->name, name))
			return m;
	}
	return NULL;
}

uint32_t layout_pointee(const struct hr_binary *bin, uint32_t id)
{
	const struct hr_type *t = hr_binary_type(bin, hr_binary_resolve_typedef(bin, id));

	return t->shape == HR_SHAPE_POINTER ? t->target : 0;
}

/*
 * Go stores a value in an interface's data word when it is one pointer-shaped word.
 * Up to Go 1.25 the compiler decides by shape: a pointer, map, channel, func or
 * unsafe.Pointer, or a struct of exactly one field or an array of exactly one element of
 * such a type. From Go 1.26 by size: one word of size and one of pointer bytes, so a
 * struct with zero-size fields beside its pointer (struct{ _ struct{}; p *T },
 * sync/atomic.Pointer[T]) is direct from 1.26 only. go_minor is the dump's release
 * (0 unknown: the newest rule).
 */
bool layout_direct_iface(const struct hr_binary *bin, uint32_t id, unsigned ps,
			 unsigned go_minor)
{
	bool by_shape = go_minor && go_minor < 26;

	for (int depth = 0; depth < 64; depth++) {
		const struct hr_type *t;

		id = layout_resolve(bin, id);
		t = hr_binary_type(bin, id);
		switch (t->kind) {
		case HR_KIND_PTR:
		case HR_KIND_UNSAFE_POINTER:
		case HR_KIND_MAP:
		case HR_KIND_CHAN:
		case HR_KIND_FUNC:
			return true;
		case HR_KIND_STRUCT: {
			uint32_t first_word = 0;

			if (t->size != ps || (by_shape && t->member_count != 1))
				return false;
			for (uint32_t i = 0; i < t->member_count; i++) {
				const struct hr_member *m = hr_binary_member(bin, t->first_member + i);

				if (m->offset == 0 &&
				    hr_binary_type(bin, layout_resolve(bin, m->type))->size == ps)
					first_word = m->type;
			}
			if (!first_word)
				return false;
			id = first_word;
			break;
		}
		case HR_KIND_ARRAY:
			if (t->size != ps || t->count != 1)
				return false;
			id = t->elem;
			break;
		default:
			return false;
		}
	}
	return false;
}

static int cmp_itab(const void *a, const void *b)
{
	const struct itab_entry *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

int layout_load_itabs(struct scan_ctx *ctx)
{
	size_t n;
	const struct hr_itab *it = hr_dump_itabs(ctx->tables.dump, &n);

	if (!n)
		return HR_OK;
	ctx->itabs = malloc(n * sizeof(*ctx->itabs));
	if (!ctx->itabs)
		return HR_ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (it[i].type_addr) /* go1.3's records name no type: the binary's itab will */
			ctx->itabs[ctx->nitabs++] = (struct itab_entry){ it[i].addr, it[i].type_addr };
	qsort(ctx->itabs, ctx->nitabs, sizeof(*ctx->itabs), cmp_itab);
	return HR_OK;
}

/*
 * The type an itab names: the dump's itab records, else the itab in the binary's data;
 * 0 if neither has it (the walker's status HR_ENOMEM if reading ran out of memory).
 */
static uint64_t itab_type_addr(struct walker *wk, uint64_t tab)
{
	const struct scan_tables *tb = &wk->tables;
	const struct scan_ctx *ctx = wk->ctx;
	size_t n = hr_count_key_at_most(ctx->itabs, ctx->nitabs, sizeof(*ctx->itabs),
					offsetof(struct itab_entry, addr), tab);
	uint8_t word[8];
	struct hr_error err = { 0 };
	int rc;

	if (n && ctx->itabs[n - 1].addr == tab)
		return ctx->itabs[n - 1].type_addr;
	/* itab{inter, _type, ...}: the type is the second word, in every release since 1.7 */
	rc = hr_image_read(&tb->img, tab + tb->ps, word, tb->ps, &err);
	if (walker_fail_on_nomem(wk, rc))
		return 0;
	return hr_dump_word(tb->dump, word);
}

static uint32_t iface_dynamic(struct walker *wk, uint64_t w, uint32_t iface_type)
{
	const struct hr_binary *bin = wk->tables.bin;
	const struct hr_type *t = hr_binary_type(bin, hr_binary_resolve_typedef(bin, iface_type));
	const struct hr_member *first;

	if (!t->member_count)
		return 0;
	first = hr_binary_member(bin, t->first_member);
	/* runtime.eface{_type, data} or runtime.iface{tab, data} */
	if (!strcmp(first->name, "tab"))
		w = itab_type_addr(wk, w);
	return w ? hr_image_type_by_runtime_addr(&wk->tables.img, w) : 0;
}

/*
 * The interfaces of a slice or map mostly hold values of one type: the last answer is
 * kept (a []any of Pt: pass 1 of a 1M-object records dump runs 4.3% fewer
 * instructions).
 */
uint32_t layout_iface_dynamic(struct walker *wk, const struct region *r, uint64_t addr,
			      uint32_t iface_type)
{
	struct iface_memo *m = &wk->iface_memo;
	uint64_t w = region_word(&wk->tables, r, addr);
	uint32_t dyn;

	if (!w)
		return 0;
	if (m->word == w && m->iface_type == iface_type)
		return m->dyn;
	dyn = iface_dynamic(wk, w, iface_type);
	if (!wk->status)
		*m = (struct iface_memo){ .word = w, .iface_type = iface_type, .dyn = dyn };
	return dyn;
}

/*
 * From Go 1.22, an object of more than 512 bytes and at most 32 KiB in a span that
 * holds pointers starts with a malloc header: the address of its type. The user's
 * pointer is one word past it.
 */
uint32_t layout_header_type(const struct scan_ctx *ctx, uint64_t value)
{
	const struct scan_tables *tb = &ctx->tables;
	int64_t i;
	struct hr_object o;

	if (ctx->go_minor < 22)
		return 0;
	i = hr_dump_object_at(tb->dump, value);
	if (i < 0)
		return 0;
	o = hr_dump_object(tb->dump, (size_t)i);
	if (o.size <= 512 || o.size > 32768 || value != o.addr + tb->ps ||
	    !hr_dump_object_ptr_count(tb->dump, (size_t)i))
		return 0;
	return hr_image_type_by_runtime_addr(&tb->img, hr_dump_word(tb->dump, o.data));
}

uint32_t layout_atomic_pointer(const struct hr_binary *bin, uint32_t struct_id)
{
	const struct hr_type *t = hr_binary_type(bin, struct_id);
	static const char prefix[] = "sync/atomic.Pointer[";

	if (strncmp(t->name, prefix, sizeof(prefix) - 1))
		return 0;
	/* struct{ _ [0]*T; _ noCopy; v unsafe.Pointer }: the [0]*T says what v is */
	for (uint32_t i = 0; i < t->member_count; i++) {
		const struct hr_member *m = hr_binary_member(bin, t->first_member + i);
		const struct hr_type *mt = hr_binary_type(bin, hr_binary_resolve_typedef(bin, m->type));

		if (mt->shape == HR_SHAPE_ARRAY && mt->elem &&
		    layout_pointee(bin, mt->elem))
			return mt->elem;
	}
	return 0;
}

unsigned layout_go_minor(const struct hr_bytes *version)
{
	for (uint64_t i = 0; i + 4 <= version->len; i++) {
		unsigned minor = 0;
		uint64_t j;

		if (memcmp(version->ptr + i, "go1.", 4))
			continue;
		for (j = i + 4; j < version->len && version->ptr[j] >= '0' &&
				version->ptr[j] <= '9' && minor < 10000; j++)
			minor = minor * 10 + (unsigned)(version->ptr[j] - '0');
		if (j > i + 4)
			return minor;
	}
	return 0;
}
