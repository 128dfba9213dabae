/* SPDX-License-Identifier: Apache-2.0 */
/*
 * binary.c - the binary reader's entry points: opening and freeing, the string
 * table, the load bias, and the lookups over the tables binary_dwarf.c built
 * (types by id, name and runtime type; globals; functions by PC).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binary_dwarf_internal.h"

/* ---- string table ----------------------------------------------------------------------- */

#define STRTAB_CHUNK 65536

const char *strtab_add(struct strtab *st, const char *s, size_t len)
{
	char *out;

	if (len + 1 > st->left) {
		size_t size = len + 1 > STRTAB_CHUNK / 4 ? len + 1 : STRTAB_CHUNK;
		char *chunk = malloc(size);

		if (!chunk || hr_array_reserve((void **)&st->chunks, &st->cap, st->n + 1,
					       sizeof(*st->chunks))) {
			free(chunk);
			return NULL;
		}
		st->chunks[st->n++] = chunk;
		st->bytes += size;
		if (size != STRTAB_CHUNK) { /* a big string gets a chunk of its own */
			memcpy(chunk, s, len);
			chunk[len] = '\0';
			return chunk;
		}
		st->cur = chunk;
		st->left = size;
	}
	out = st->cur;
	memcpy(out, s, len);
	out[len] = '\0';
	st->cur += len + 1;
	st->left -= len + 1;
	return out;
}

int bin_array_alloc(void **items, size_t *cap, size_t n, size_t elem_size)
{
	uint64_t bytes;
	void *p;

	if (!hr_mul_ok(n ? n : 1, elem_size, &bytes) || bytes > SIZE_MAX ||
	    !(p = malloc((size_t)bytes)))
		return HR_ENOMEM;
	free(*items);
	*items = p;
	*cap = n ? n : 1;
	return HR_OK;
}

void bin_array_shrink(void **items, size_t n, size_t *cap, size_t elem_size)
{
	void *shrunk;

	if (n >= *cap || n == 0)
		return;
	shrunk = realloc(*items, n * elem_size); /* no overflow: n < cap, already allocated */
	if (shrunk) {
		*items = shrunk;
		*cap = n;
	}
}

void strtab_release(struct strtab *st)
{
	for (size_t i = 0; i < st->n; i++)
		free(st->chunks[i]);
	free(st->chunks);
	memset(st, 0, sizeof(*st));
}

/* ---- open and free ------------------------------------------------------------------------ */

void binary_describe_limits(struct hr_binary *bin)
{
	if (!bin->has_symtab && !hr_binary_has_dwarf(bin))
		snprintf(bin->limits, sizeof(bin->limits),
			 "no DWARF and no symbol table (built with -ldflags='-s -w'): no types, "
			 "globals or frame variables; chains can only name roots by segment and "
			 "offset");
	else if (!hr_binary_has_dwarf(bin))
		snprintf(bin->limits, sizeof(bin->limits),
			 "no DWARF (built with -ldflags=-w): no types, globals or frame variables; "
			 "chains follow pointer bitmaps only and name roots by ELF symbol");
	else if (!bin->has_runtime_types)
		snprintf(bin->limits, sizeof(bin->limits),
			 "no runtime.types symbol: interface type words cannot be mapped to types");
}

static struct hr_binary *binary_new(const char *path, struct hr_error *err)
{
	struct hr_binary *bin = calloc(1, sizeof(*bin));

	if (!bin || !(bin->path = strdup(path))) {
		free(bin);
		hr_error_set(err, HR_ENOMEM, "%s: out of memory", path);
		return NULL;
	}
	bin->fd = -1;
	binary_vars_init(bin);
	return bin;
}

/* Opens the ELF file at path, called name; its DWARF too when with_dwarf. */
static struct hr_binary *binary_open(const char *path, const char *name, bool with_dwarf,
				     struct hr_error *err)
{
	struct hr_binary *bin = binary_new(name, err);
	int rc;

	if (!bin)
		return NULL;
	/* the DWARF before the symbols: the peak is while .debug_info is inflated */
	rc = binary_elf_open(bin, path, err);
	if (!rc && with_dwarf)
		rc = binary_dwarf_load(bin, err);
	if (!rc)
		rc = binary_elf_read_symbols(bin, err);
	if (rc) {
		hr_binary_free(bin);
		return NULL;
	}
	bin->has_file = true;
	binary_describe_limits(bin);
	return bin;
}

struct hr_binary *hr_binary_open(const char *path, struct hr_error *err)
{
	return binary_open(path, path, true, err);
}

struct hr_binary *hr_binary_open_as(const char *path, const char *name, bool with_dwarf,
				    struct hr_error *err)
{
	return binary_open(path, name, with_dwarf, err);
}

struct hr_binary *hr_binary_open_without_dwarf(const char *path, struct hr_error *err)
{
	return binary_open(path, path, false, err);
}

struct hr_binary *hr_binary_none(struct hr_error *err)
{
	struct hr_binary *bin = binary_new("(no binary)", err);

	if (bin)
		snprintf(bin->limits, sizeof(bin->limits),
			 "no binary: no types, globals or frame variables; roots are named by "
			 "segment and offset or function, objects by the dump's type records");
	return bin;
}

bool hr_binary_has_file(const struct hr_binary *bin)
{
	return bin->has_file;
}

void hr_binary_free(struct hr_binary *bin)
{
	if (!bin)
		return;
	binary_vars_free(bin);
	binary_dwarf_close(bin);
	binary_elf_close(bin);
	strtab_release(&bin->strings);
	free(bin->path);
	free(bin);
}

const char *hr_binary_path(const struct hr_binary *bin)
{
	return bin->path;
}

bool hr_binary_has_dwarf(const struct hr_binary *bin)
{
	return bin->has_dwarf;
}

bool hr_binary_has_symbols(const struct hr_binary *bin)
{
	return bin->has_symtab;
}

const char *hr_binary_limits(const struct hr_binary *bin)
{
	return bin->limits;
}

unsigned hr_binary_dwarf_version(const struct hr_binary *bin)
{
	return bin->dwarf_version;
}

unsigned hr_binary_ptr_size(const struct hr_binary *bin)
{
	return bin->ptr_size;
}

uint64_t hr_binary_debug_info_size(const struct hr_binary *bin)
{
	return bin->debug_info_size;
}

uint64_t hr_binary_table_bytes(const struct hr_binary *bin)
{
	return bin->strings.bytes + bin->types_cap * sizeof(*bin->types) +
	       bin->type_offsets_cap * sizeof(*bin->type_offsets) +
	       bin->members_cap * sizeof(*bin->members) + bin->types_n * sizeof(uint32_t) +
	       bin->rt_index_cap * sizeof(*bin->rt_index) +
	       bin->globals_cap * sizeof(*bin->globals) + bin->funcs_cap * sizeof(*bin->funcs) +
	       bin->funcs_n * sizeof(*bin->func_offsets) +
	       (bin->func_vars ? bin->funcs_n * sizeof(*bin->func_vars) : 0) +
	       bin->symbols_cap * sizeof(*bin->symbols) + bin->sections_cap * sizeof(*bin->sections);
}

/* ---- bias ------------------------------------------------------------------------------------ */

uint64_t hr_binary_elf_data_addr(const struct hr_binary *bin)
{
	return bin->data_addr;
}

uint64_t hr_binary_elf_entry(const struct hr_binary *bin)
{
	return bin->elf_entry;
}

bool hr_binary_is_pie(const struct hr_binary *bin)
{
	return bin->pie;
}

/*
 * Whether adding delta to addresses sorted from lo to hi keeps them sorted: a corrupt
 * ELF address near the top, or a bias from a corrupt dump, may wrap some past 2^64.
 */
static bool stays_sorted(uint64_t lo, uint64_t hi, uint64_t delta)
{
	return lo + delta <= hi + delta;
}

int hr_image_at(const struct hr_binary *bin, uint64_t bias, struct hr_image *out,
		struct hr_error *err)
{
	if ((bin->symbols_n && !stays_sorted(bin->symbols[0].addr,
					     bin->symbols[bin->symbols_n - 1].addr, bias)) ||
	    (bin->globals_n && !stays_sorted(bin->globals[0].addr,
					     bin->globals[bin->globals_n - 1].addr, bias)) ||
	    (bin->funcs_n && !stays_sorted(bin->funcs[0].low_pc,
					   bin->funcs[bin->funcs_n - 1].low_pc, bias)))
		return hr_error_set(err, HR_EINPUT, "%s: loaded at 0x%" PRIx64 " more than its "
				    "ELF addresses, some of them would wrap past the end of the "
				    "address space", bin->path, bias);
	*out = (struct hr_image){ bin, bias };
	return HR_OK;
}

int hr_image_from_data(const struct hr_binary *bin, uint64_t runtime_data_addr,
		       struct hr_image *out, struct hr_error *err)
{
	if (!bin->data_addr)
		return hr_error_set(err, HR_EINPUT, "%s: no .data section to compute the load bias from",
				    bin->path);
	return hr_image_at(bin, runtime_data_addr - bin->data_addr, out, err);
}

/* ---- types ------------------------------------------------------------------------------------ */

uint32_t hr_binary_type_count(const struct hr_binary *bin)
{
	return (uint32_t)bin->types_n;
}

const struct hr_type *hr_binary_type(const struct hr_binary *bin, uint32_t id)
{
	static const struct hr_type void_type = { .name = "" };

	return id < bin->types_n ? &bin->types[id] : &void_type;
}

const struct hr_member *hr_binary_member(const struct hr_binary *bin, uint32_t index)
{
	return index < bin->members_n ? &bin->members[index] : NULL;
}

uint32_t hr_binary_resolve_typedef(const struct hr_binary *bin, uint32_t id)
{
	for (int steps = 0; steps < 64 && id < bin->types_n; steps++) {
		const struct hr_type *t = &bin->types[id];

		if (t->shape != HR_SHAPE_TYPEDEF || t->target == 0)
			return id;
		id = t->target;
	}
	return id < bin->types_n ? id : 0;
}

const struct hr_member *hr_binary_find_member(const struct hr_binary *bin, uint32_t id,
					      const char *name)
{
	const struct hr_type *t = hr_binary_type(bin, hr_binary_resolve_typedef(bin, id));

	for (uint32_t i = 0; i < t->member_count; i++) {
		const struct hr_member *m = hr_binary_member(bin, t->first_member + i);

		if (m && !strcmp(m->name, name))
			return m;
	}
	return NULL;
}

struct name_key {
	const char *name;
	uint32_t id;
	uint8_t typedef_last;
};

static uint64_t resolved_size(const struct hr_binary *bin, uint32_t type)
{
	return hr_binary_type(bin, hr_binary_resolve_typedef(bin, type))->size;
}

/* The length of buf after snprintf() wrote n of it from len on (cut at cap). */
static size_t grown(size_t len, int n, size_t cap)
{
	return n < 0 ? len : len + (size_t)n < cap ? len + (size_t)n : cap - 1;
}

static size_t append_index(char *buf, size_t len, size_t cap, uint64_t i)
{
	return len + 1 >= cap ? len : grown(len, snprintf(buf + len, cap - len, "[%" PRIu64 "]", i), cap);
}

static size_t append_member(char *buf, size_t len, size_t cap, const char *name)
{
	return len + 1 >= cap ? len : grown(len, snprintf(buf + len, cap - len, ".%s", name), cap);
}

const char *hr_binary_name_offset(const struct hr_binary *bin, uint32_t type, bool array,
				  uint64_t off, char *buf, size_t cap)
{
	size_t len = 0;
	uint64_t es;

	if (!cap)
		return buf;
	buf[0] = '\0';
	if (!type)
		return buf;
	if (array) {
		if (!(es = resolved_size(bin, type)))
			return buf;
		len = append_index(buf, len, cap, off / es);
		off %= es;
	}
	for (int depth = 0; depth < 32 && type; depth++) {
		const struct hr_type *t = hr_binary_type(bin, hr_binary_resolve_typedef(bin, type));
		const struct hr_member *m = NULL;

		if (t->shape == HR_SHAPE_ARRAY) {
			if (!(es = resolved_size(bin, t->elem)))
				break;
			len = append_index(buf, len, cap, off / es);
			off %= es;
			type = t->elem;
			continue;
		}
		if (t->shape != HR_SHAPE_STRUCT)
			break;
		for (uint32_t k = 0; k < t->member_count && !m; k++) {
			const struct hr_member *c = hr_binary_member(bin, t->first_member + k);
			uint64_t size = resolved_size(bin, c->type);

			if (size && off >= c->offset && off - c->offset < size)
				m = c; /* (a zero-size member shares its offset with the next) */
		}
		if (!m)
			break;
		len = append_member(buf, len, cap, m->name ? m->name : "?");
		off -= m->offset;
		type = m->type;
	}
	return buf;
}

static int cmp_name_key(const void *a, const void *b)
{
	const struct name_key *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	if (x->typedef_last != y->typedef_last)
		return x->typedef_last < y->typedef_last ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Sorts type ids by name into bin->types_by_name (typedefs after other shapes). */
static int build_name_index(struct hr_binary *bin, struct hr_error *err)
{
	size_t n = bin->types_n;
	struct name_key *keys = calloc(n ? n : 1, sizeof(*keys));

	bin->types_by_name = calloc(n ? n : 1, sizeof(*bin->types_by_name));
	if (!keys || !bin->types_by_name) {
		free(keys);
		return hr_error_set(err, HR_ENOMEM, "%s: out of memory", bin->path);
	}
	for (size_t i = 0; i < n; i++) {
		keys[i].name = bin->types[i].name;
		keys[i].id = (uint32_t)i;
		keys[i].typedef_last = bin->types[i].shape == HR_SHAPE_TYPEDEF;
	}
	hr_sort(keys, n, sizeof(*keys), cmp_name_key);
	for (size_t i = 0; i < n; i++)
		bin->types_by_name[i] = keys[i].id;
	free(keys);
	return HR_OK;
}

void binary_derive_typedefs(struct hr_binary *bin)
{
	/* typedefs: size and kind of what they name, when they have none of their own */
	for (size_t id = 1; id < bin->types_n; id++) {
		struct hr_type *t = &bin->types[id];
		const struct hr_type *r = hr_binary_type(bin, hr_binary_resolve_typedef(bin, (uint32_t)id));

		if (t->shape != HR_SHAPE_TYPEDEF)
			continue;
		if (!t->size)
			t->size = r->size;
		if (t->kind == HR_KIND_INVALID)
			t->kind = r->kind;
	}
}

static int cmp_global(const void *a, const void *b)
{
	const struct hr_global *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int cmp_rt(const void *a, const void *b)
{
	const struct rt_entry *x = a, *y = b;

	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

int binary_build_indexes(struct hr_binary *bin, struct hr_error *err)
{
	size_t n = 0;

	hr_sort(bin->globals, bin->globals_n, sizeof(*bin->globals), cmp_global);
	for (size_t id = 1; id < bin->types_n; id++)
		n += (bin->types[id].flags & HR_TYPE_HAS_RUNTIME_TYPE) != 0;
	if (bin_array_alloc((void **)&bin->rt_index, &bin->rt_index_cap, n, sizeof(*bin->rt_index)))
		return hr_error_set(err, HR_ENOMEM, "%s: out of memory", bin->path);
	for (size_t id = 1; id < bin->types_n; id++) {
		const struct hr_type *t = &bin->types[id];
		struct rt_entry *e;

		if (!(t->flags & HR_TYPE_HAS_RUNTIME_TYPE))
			continue;
		e = VEC_PUSH(bin, rt_index);
		e->offset = t->runtime_type;
		e->id = (uint32_t)id;
	}
	hr_sort(bin->rt_index, bin->rt_index_n, sizeof(*bin->rt_index), cmp_rt);
	return build_name_index(bin, err);
}

uint32_t hr_binary_find_type(const struct hr_binary *bin, const char *name)
{
	size_t lo = 0, hi = bin->types_n;

	if (!bin->types_by_name || !name[0])
		return 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(bin->types[bin->types_by_name[mid]].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < bin->types_n && !strcmp(bin->types[bin->types_by_name[lo]].name, name))
		return bin->types_by_name[lo];
	return 0;
}

uint32_t hr_binary_type_by_runtime_addr(const struct hr_binary *bin, uint64_t addr)
{
	uint64_t off = addr - bin->runtime_types;
	size_t lo = 0, hi = bin->rt_index_n;

	if (!bin->has_runtime_types || addr < bin->runtime_types)
		return 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (bin->rt_index[mid].offset < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < bin->rt_index_n && bin->rt_index[lo].offset == off ? bin->rt_index[lo].id : 0;
}

uint64_t hr_binary_runtime_type_addr(const struct hr_binary *bin, uint32_t id)
{
	const struct hr_type *t = hr_binary_type(bin, id);
	uint64_t elf_addr;

	if (!bin->has_runtime_types || !(t->flags & HR_TYPE_HAS_RUNTIME_TYPE))
		return 0;
	/* a corrupt offset past 2^64 names no address (and could not be found back) */
	if (!hr_add_ok(bin->runtime_types, t->runtime_type, &elf_addr))
		return 0;
	return elf_addr;
}

/* ---- globals ---------------------------------------------------------------------------------- */

size_t hr_binary_global_count(const struct hr_binary *bin)
{
	return bin->globals_n;
}

const struct hr_global *hr_binary_global(const struct hr_binary *bin, size_t index)
{
	return index < bin->globals_n ? &bin->globals[index] : NULL;
}

const struct hr_global *hr_binary_find_global(const struct hr_binary *bin, const char *name)
{
	for (size_t i = 0; i < bin->globals_n; i++)
		if (!strcmp(bin->globals[i].name, name))
			return &bin->globals[i];
	return NULL;
}

const struct hr_global *hr_binary_global_at(const struct hr_binary *bin, uint64_t addr)
{
	size_t lo = hr_count_key_at_most(bin->globals, bin->globals_n, sizeof(*bin->globals),
					 offsetof(struct hr_global, addr), addr);

	if (lo == 0)
		return NULL;
	const struct hr_global *g = &bin->globals[lo - 1];
	uint64_t size = hr_binary_type(bin, g->type)->size;

	return addr - g->addr < (size ? size : 1) ? g : NULL;
}

/* ---- functions ------------------------------------------------------------------------------- */

size_t hr_binary_func_count(const struct hr_binary *bin)
{
	return bin->funcs_n;
}

const struct hr_func *hr_binary_func(const struct hr_binary *bin, size_t index)
{
	return index < bin->funcs_n ? &bin->funcs[index] : NULL;
}

int64_t hr_binary_func_at(const struct hr_binary *bin, uint64_t pc)
{
	size_t lo = hr_count_key_at_most(bin->funcs, bin->funcs_n, sizeof(*bin->funcs),
					 offsetof(struct hr_func, low_pc), pc);

	if (lo == 0 || pc >= bin->funcs[lo - 1].high_pc)
		return -1;
	return (int64_t)(lo - 1);
}
