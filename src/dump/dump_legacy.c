/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dump_legacy.c - the go1.3 and go1.4 heap dump formats ("go1.3 heap dump\n",
 * "go1.4 heap dump\n"), read into the same model as go1.5's (docs/heap-dumps.md has
 * the layouts). Most records are laid out as in go1.5; what differs:
 *
 *   - field lists also describe strings, slices and interfaces (go1.3: 1 pointer,
 *     2 string, 3 slice, 4 iface, 5 eface; go1.4: 1 pointer, 2 iface, 3 eface). An
 *     interface's second word holds a pointer only when the type record of its type
 *     (eface) or itab (iface) says so; this reader turns every field into the pointer
 *     words it holds, so the model keeps one pointer bit per word as for go1.5;
 *   - go1.3 object records carry no field list but the address of their type and a
 *     kind (0 one T, 1 an array of T, 2 a channel of T after its header, 127 scanned
 *     conservatively: every word may be a pointer), and go1.3 type records end with
 *     the type's field list;
 *   - the params record holds the architecture as the toolchain's letter ('6' amd64),
 *     and in go1.3 the size of a channel's header;
 *   - go1.3 itab records hold whether the data word is a pointer, not a type.
 *
 * The pre-release go1.3 layout (dump_prerelease.c) has the released go1.3's objects and
 * itabs; its type records count their fields and number the kinds from 0 (0 pointer, 1
 * string, 2 slice, 3 iface, 4 eface), and its params record has no architecture,
 * GOEXPERIMENT or CPU count. Those two are read here too.
 *
 * Objects keep the type their records give (go1.3: their own; both: the type of an
 * interface that points at them), for analyses without the binary's DWARF.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "dump_cursor.h"

enum field_kind { LF_PTR, LF_STRING, LF_SLICE, LF_IFACE, LF_EFACE, LF_COUNT };

/* Words a field of each kind spans: the check that it lies inside its region. */
static const unsigned field_width[LF_COUNT] = { 1, 2, 3, 2, 2 };

#define KIND13_SINGLE 0
#define KIND13_ARRAY 1
#define KIND13_CHAN 2
#define KIND13_CONSERVATIVE 127

/* Address -> index, open addressing; key 0 is never stored (no record has address 0). */
struct addr_map {
	uint64_t *keys;
	uint32_t *vals;
	size_t cap; /* power of two, or 0 */
	size_t n;
};

struct type_field {
	uint64_t offset;
	uint8_t kind; /* enum field_kind */
};

struct field_range {
	uint32_t first, n; /* in legacy.fields */
};

struct type_note {
	uint64_t addr;
	uint32_t value; /* as in hr_dump.obj_types */
};

struct legacy {
	struct addr_map types; /* type address -> index in d->dump.types (the latest record) */
	struct addr_map itabs; /* itab address -> index in d->itabs */
	VEC(struct type_field, fields);        /* go1.3: type records' field lists */
	VEC(struct field_range, type_fields);  /* go1.3: per d->dump.types entry */
	VEC(uint8_t, itab_ptr);                /* go1.3: per d->itabs entry: data is a pointer */
	VEC(struct type_note, notes);          /* objects' types, to set once they are indexed */
	uint64_t hchan_size;                   /* go1.3 */
	uint64_t pending;                      /* an interface's data word, for the next call */
	bool has_pending;
};

/* --- the address map ------------------------------------------------------------------ */

static size_t slot_of(const struct addr_map *m, uint64_t key)
{
	uint64_t h = key * 0x9E3779B97F4A7C15u;

	return (size_t)(h ^ (h >> 29)) & (m->cap - 1);
}

static bool map_get(const struct addr_map *m, uint64_t key, uint32_t *val)
{
	if (!m->cap)
		return false;
	for (size_t i = slot_of(m, key);; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == key) {
			*val = m->vals[i];
			return true;
		}
		if (!m->keys[i])
			return false;
	}
}

static void map_store(struct addr_map *m, uint64_t key, uint32_t val)
{
	size_t i = slot_of(m, key);

	while (m->keys[i] && m->keys[i] != key)
		i = (i + 1) & (m->cap - 1);
	m->n += !m->keys[i];
	m->keys[i] = key;
	m->vals[i] = val;
}

static int map_grow(struct addr_map *m)
{
	struct addr_map bigger = { .cap = m->cap ? m->cap * 2 : 64 };

	bigger.keys = calloc(bigger.cap, sizeof(*bigger.keys));
	bigger.vals = calloc(bigger.cap, sizeof(*bigger.vals));
	if (!bigger.keys || !bigger.vals) {
		free(bigger.keys);
		free(bigger.vals);
		return HR_ENOMEM;
	}
	for (size_t i = 0; i < m->cap; i++)
		if (m->keys[i])
			map_store(&bigger, m->keys[i], m->vals[i]);
	free(m->keys);
	free(m->vals);
	*m = bigger;
	return HR_OK;
}

static int map_put(struct addr_map *m, uint64_t key, uint32_t val)
{
	if ((m->n + 1) * 2 > m->cap && map_grow(m))
		return HR_ENOMEM;
	map_store(m, key, val);
	return HR_OK;
}

static void map_release(struct addr_map *m)
{
	free(m->keys);
	free(m->vals);
}

/* --- lifecycle ------------------------------------------------------------------------ */

int legacy_begin(struct cursor *c)
{
	c->legacy = calloc(1, sizeof(*c->legacy));
	return c->legacy ? HR_OK : cur_nomem(c);
}

void legacy_end(struct cursor *c)
{
	struct legacy *l = c->legacy;

	if (!l)
		return;
	map_release(&l->types);
	map_release(&l->itabs);
	free(l->fields);
	free(l->type_fields);
	free(l->itab_ptr);
	free(l->notes);
	free(l);
	c->legacy = NULL;
}

/* --- types and interfaces ------------------------------------------------------------- */

static int note_type(struct cursor *c, uint64_t addr, uint32_t type, enum obj_type_how how)
{
	struct type_note *n = VEC_PUSH(c->legacy, notes);

	if (!n)
		return cur_nomem(c);
	*n = (struct type_note){ addr, (type + 1) << 2 | how };
	return HR_OK;
}

/* The type record (index in d->dump.types) an interface's first word names, or -1. */
static int64_t interface_type(const struct cursor *c, enum field_kind kind, uint64_t first)
{
	const struct legacy *l = c->legacy;
	uint32_t i, t;

	if (kind == LF_EFACE)
		return map_get(&l->types, first, &t) ? (int64_t)t : -1;
	if (!map_get(&l->itabs, first, &i) || c->d->dump.minor == 3) /* go1.3 itabs name no type */
		return -1;
	return map_get(&l->types, c->d->itabs[i].type_addr, &t) ? (int64_t)t : -1;
}

/*
 * Whether the data word of an interface whose first word is `first` holds a pointer,
 * as its type record (eface) or itab (iface) says; when no record says, it may (go1.4
 * interfaces always hold pointers; a go1.3 dump names every type it needs first).
 */
static bool interface_data_is_ptr(const struct cursor *c, enum field_kind kind, uint64_t first,
				  int64_t type)
{
	uint32_t i;

	if (type >= 0)
		return c->d->dump.types[type].data_is_ptr;
	if (kind == LF_IFACE && c->d->dump.minor == 3 && map_get(&c->legacy->itabs, first, &i))
		return c->legacy->itab_ptr[i];
	return true;
}

/*
 * The pointer words of a field of `kind` at offset off of a region (contents, inside
 * the mapping): their offsets in out, returns how many. A string or slice holds one, its
 * data pointer; an interface its first word (an itab or type, in the heap if made at
 * run time) and its data word if that is a pointer.
 */
static int field_words(struct cursor *c, const uint8_t *contents, enum field_kind kind,
		       uint64_t off, uint64_t out[2], unsigned *n)
{
	uint32_t ps = c->d->params.ptr_size;
	uint64_t first, data;
	int64_t type;

	out[0] = off;
	*n = 1;
	if (kind != LF_IFACE && kind != LF_EFACE)
		return HR_OK;
	first = hr_dump_word(c->d, contents + off);
	if (!first)
		return HR_OK; /* a nil interface */
	type = interface_type(c, kind, first);
	if (!interface_data_is_ptr(c, kind, first, type))
		return HR_OK;
	out[(*n)++] = off + ps;
	data = hr_dump_word(c->d, contents + off + ps);
	return type >= 0 && data ? note_type(c, data, (uint32_t)type, OBJ_TYPE_POINTEE) : HR_OK;
}

/* A field list's kind in the dump's numbering -> enum field_kind, or LF_COUNT. */
static enum field_kind field_kind_of(unsigned minor, uint64_t kind)
{
	static const enum field_kind go13[] = { LF_COUNT, LF_PTR, LF_STRING, LF_SLICE,
						LF_IFACE, LF_EFACE };
	static const enum field_kind go14[] = { LF_COUNT, LF_PTR, LF_IFACE, LF_EFACE };

	if (minor == 3)
		return kind < 6 ? go13[kind] : LF_COUNT;
	return kind < 4 ? go14[kind] : LF_COUNT;
}

/*
 * Checks the offset (at `at`) of a field of `kind`: pointer-aligned, and the field inside
 * the region_len bytes of `region`.
 */
static int check_field(struct cursor *c, const uint8_t *at, enum field_kind kind, uint64_t off,
		       uint64_t region_len, const char *region)
{
	uint32_t ps = c->d->params.ptr_size;
	uint64_t width = (uint64_t)field_width[kind] * ps;

	if (off % ps)
		return cur_fail(c, at, "field offset %" PRIu64 " is not a multiple of the pointer size %" PRIu32,
			        off, ps);
	if (off > region_len || region_len - off < width)
		return cur_fail(c, at, "field at offset %" PRIu64 " (%" PRIu64 " bytes) lies outside the %s (%" PRIu64 " bytes)",
			        off, width, region, region_len);
	return HR_OK;
}

/* A field's offset after its kind, checked against the region: 1, or the failure. */
static int read_field_offset(struct cursor *c, uint64_t region_len, const char *region,
			     enum field_kind kind, uint64_t *off)
{
	const uint8_t *at = c->pos;
	int rc;

	if ((rc = cur_uvarint(c, off, "field offset")) ||
	    (rc = check_field(c, at, kind, *off, region_len, region)))
		return rc;
	return 1;
}

/*
 * Reads a field list entry's kind and offset (0 at the end of the list), checking that
 * the field lies inside the region_len bytes of `region`.
 */
static int read_field(struct cursor *c, uint64_t region_len, const char *region,
		      enum field_kind *kind, uint64_t *off)
{
	const uint8_t *at = c->pos;
	uint64_t k;
	int rc = cur_uvarint(c, &k, "field kind");

	if (rc)
		return rc;
	if (k == 0)
		return 0;
	*kind = field_kind_of(c->d->dump.minor, k);
	if (*kind == LF_COUNT)
		return cur_fail(c, at, "field kind %" PRIu64 " in the %s's field list (go1.%u: %s)", k,
			        region, c->d->dump.minor,
			        c->d->dump.minor == 3 ? "want 1 pointer, 2 string, 3 slice, 4 iface, 5 eface, 0 end"
			                         : "want 1 pointer, 2 iface, 3 eface, 0 end");
	return read_field_offset(c, region_len, region, *kind, off);
}

/*
 * The same for the pre-release go1.3 layout, whose type records count their fields and
 * number the kinds from 0 (0 pointer, 1 string, 2 slice, 3 iface, 4 eface).
 */
static int read_field_pre(struct cursor *c, uint64_t region_len, const char *region,
			  enum field_kind *kind, uint64_t *off)
{
	const uint8_t *at = c->pos;
	uint64_t k;
	int rc = cur_uvarint(c, &k, "field kind");

	if (rc)
		return rc;
	if (k >= LF_COUNT)
		return cur_fail(c, at, "field kind %" PRIu64 " in the %s's field list (the pre-release "
				"go1.3 layout: want 0 pointer, 1 string, 2 slice, 3 iface, 4 eface)", k, region);
	*kind = (enum field_kind)k;
	return read_field_offset(c, region_len, region, *kind, off);
}

int legacy_next_field(struct cursor *c, const uint8_t *contents, uint64_t region_len,
		      const char *region, uint64_t *off)
{
	struct legacy *l = c->legacy;
	enum field_kind kind;
	uint64_t words[2];
	unsigned n;
	int rc;

	if (l->has_pending) {
		l->has_pending = false;
		*off = l->pending;
		return 1;
	}
	if ((rc = read_field(c, region_len, region, &kind, off)) != 1)
		return rc;
	if ((rc = field_words(c, contents, kind, *off, words, &n)))
		return rc;
	if (n == 2) {
		l->pending = words[1];
		l->has_pending = true;
	}
	return 1;
}

/* --- records -------------------------------------------------------------------------- */

/* Adds a type record: to d->dump.types, and as the one its address names from now on. */
static int add_type(struct cursor *c, const struct hr_type_record *t, const uint8_t *at)
{
	struct hr_dump *d = c->d;
	struct hr_type_record *slot;

	if (!t->addr)
		return cur_fail(c, at, "type record at address 0");
	if (d->dump.types_n >= UINT32_MAX >> 3)
		return cur_fail(c, c->rec, "too many type records");
	if (!(slot = VEC_PUSH(&d->dump, types)) || map_put(&c->legacy->types, t->addr, (uint32_t)(d->dump.types_n - 1)))
		return cur_nomem(c);
	*slot = *t;
	return HR_OK;
}

static int read_type_head(struct cursor *c, struct hr_type_record *t)
{
	int rc;

	if ((rc = cur_uvarint(c, &t->addr, "type address")) ||
	    (rc = cur_uvarint(c, &t->size, "type size")) ||
	    (rc = cur_bytes(c, &t->name, "type name")) ||
	    (rc = cur_bool(c, &t->data_is_ptr, "pointer-data flag")))
		return rc;
	return HR_OK;
}

/*
 * How many fields the pre-release layout's type record says follow: at most one per
 * two bytes left, so a count cannot claim more than the file holds.
 */
static int read_field_count(struct cursor *c, uint64_t *n)
{
	const uint8_t *at = c->pos;
	int rc = cur_uvarint(c, n, "field count");

	if (rc)
		return rc;
	if (*n > (uint64_t)(c->end - c->pos) / 2)
		return cur_short(c, at, *n * 2, "fields");
	return HR_OK;
}

/* The next field of a type record's list: 1 with kind and offset, 0 at its end. */
static int next_type_field(struct cursor *c, const struct hr_type_record *t, uint64_t *left,
			   enum field_kind *kind, uint64_t *off)
{
	if (!c->d->prov.prerelease)
		return read_field(c, t->size, "type", kind, off);
	if (!*left)
		return 0;
	--*left;
	return read_field_pre(c, t->size, "type", kind, off);
}

/*
 * go1.3: the type record ends with its field list, offsets increasing inside the type
 * (ended by kind 0; the pre-release layout gives their count first).
 */
static int read_type_fields(struct cursor *c, const struct hr_type_record *t)
{
	struct legacy *l = c->legacy;
	struct field_range *r = VEC_PUSH(l, type_fields);
	uint64_t next = 0, left = 0; /* where the next field may start; how many are left */
	enum field_kind kind;
	uint64_t off;
	const uint8_t *at;
	int rc;

	if (!r)
		return cur_nomem(c);
	if (l->fields_n >= UINT32_MAX)
		return cur_fail(c, c->rec, "too many type fields");
	*r = (struct field_range){ (uint32_t)l->fields_n, 0 };
	if (c->d->prov.prerelease && (rc = read_field_count(c, &left)))
		return rc;
	for (at = c->pos; (rc = next_type_field(c, t, &left, &kind, &off)) == 1; at = c->pos) {
		struct type_field *f;

		if (off < next)
			return cur_fail(c, at, "field at offset %" PRIu64 " overlaps the one before it "
				        "(a type's fields come in increasing offsets)", off);
		if (l->fields_n >= UINT32_MAX || !(f = VEC_PUSH(l, fields)))
			return l->fields_n >= UINT32_MAX ? cur_fail(c, at, "too many type fields") : cur_nomem(c);
		*f = (struct type_field){ off, (uint8_t)kind };
		next = off + (uint64_t)field_width[kind] * c->d->params.ptr_size;
		r->n++;
	}
	return rc;
}

static int parse_type13(struct cursor *c)
{
	struct hr_type_record t;
	const uint8_t *at = c->pos;
	int rc;

	if ((rc = cur_need_params(c)) || (rc = read_type_head(c, &t)) ||
	    (rc = read_type_fields(c, &t)))
		return rc;
	return add_type(c, &t, at);
}

static int parse_type14(struct cursor *c)
{
	struct hr_type_record t;
	const uint8_t *at = c->pos;
	int rc;

	if ((rc = read_type_head(c, &t)))
		return rc;
	return add_type(c, &t, at);
}

static int add_itab(struct cursor *c, uint64_t addr, uint64_t type_addr, const uint8_t *at)
{
	struct hr_dump *d = c->d;
	struct hr_itab *slot;

	if (!addr)
		return cur_fail(c, at, "itab record at address 0");
	if (d->itabs_n >= UINT32_MAX)
		return cur_fail(c, c->rec, "too many itab records");
	if (!(slot = VEC_PUSH(d, itabs)) || map_put(&c->legacy->itabs, addr, (uint32_t)(d->itabs_n - 1)))
		return cur_nomem(c);
	*slot = (struct hr_itab){ addr, type_addr };
	return HR_OK;
}

/* go1.3: the itab's address and whether an iface holding it has a pointer as data. */
static int parse_itab13(struct cursor *c)
{
	const uint8_t *at = c->pos;
	uint64_t addr;
	bool ptr;
	uint8_t *flag;
	int rc;

	if ((rc = cur_uvarint(c, &addr, "itab address")) ||
	    (rc = cur_bool(c, &ptr, "pointer-data flag")) || (rc = add_itab(c, addr, 0, at)))
		return rc;
	if (!(flag = VEC_PUSH(c->legacy, itab_ptr)))
		return cur_nomem(c);
	*flag = ptr;
	return HR_OK;
}

static int parse_itab14(struct cursor *c)
{
	const uint8_t *at = c->pos;
	uint64_t v[2];
	int rc;

	if ((rc = cur_uvarints(c, v, 2, "itab field")))
		return rc;
	return add_itab(c, v[0], v[1], at);
}

/* The toolchain letter the params record holds ('6') as GOARCH ("amd64"). */
static struct hr_bytes goarch_of(uint64_t letter)
{
	static const struct {
		char letter;
		const char *goarch;
	} arches[] = { { '5', "arm" }, { '6', "amd64" }, { '8', "386" }, { '9', "ppc64" } };

	for (size_t i = 0; i < sizeof(arches) / sizeof(arches[0]); i++)
		if ((uint64_t)arches[i].letter == letter)
			return (struct hr_bytes){ (const uint8_t *)arches[i].goarch,
						  strlen(arches[i].goarch) };
	return (struct hr_bytes){ (const uint8_t *)"", 0 };
}

/* The pre-release go1.3 layout's params: no architecture, GOEXPERIMENT or CPU count. */
static int parse_params_pre(struct cursor *c)
{
	int rc;

	if ((rc = cur_params_begin(c)) ||
	    (rc = cur_uvarint(c, &c->legacy->hchan_size, "channel header size")) ||
	    (rc = cur_params_heap(c)))
		return rc;
	return cur_params_end(c);
}

static int parse_params_legacy(struct cursor *c)
{
	struct hr_dump_params *pp = &c->d->params;
	uint64_t letter;
	int rc;

	if ((rc = cur_params_begin(c)) ||
	    (c->d->dump.minor == 3 && (rc = cur_uvarint(c, &c->legacy->hchan_size, "channel header size"))) ||
	    (rc = cur_params_heap(c)) || (rc = cur_uvarint(c, &letter, "architecture letter")) ||
	    (rc = cur_bytes(c, &c->d->dump.goexperiment, "GOEXPERIMENT")) ||
	    (rc = cur_uvarint(c, &pp->ncpu, "CPU count")))
		return rc;
	pp->goarch = goarch_of(letter);
	return cur_params_end(c);
}

/* go1.3: the pointer words of one T at base of an object, by its type's field list. */
static int element_ptrs(struct cursor *c, uint64_t addr, const uint8_t *contents, uint64_t base,
			const struct field_range *r)
{
	const struct type_field *f;
	uint64_t words[2];
	unsigned n;
	int rc;

	if (!r->n)
		return HR_OK; /* no fields: there may be no field array at all */
	f = c->legacy->fields + r->first;
	for (uint32_t i = 0; i < r->n; i++) {
		if ((rc = field_words(c, contents, f[i].kind, base + f[i].offset, words, &n)))
			return rc;
		for (unsigned k = 0; k < n; k++)
			if ((rc = cur_object_ptr(c, addr + words[k])))
				return rc;
	}
	return HR_OK;
}

/* go1.3: an object of no type: scanned conservatively (kind 127), or no pointers (0). */
static int untyped_object(struct cursor *c, uint64_t addr, uint64_t size, uint64_t kind)
{
	uint32_t ps = c->d->params.ptr_size;
	int rc;

	if (kind == KIND13_SINGLE)
		return HR_OK;
	if (kind != KIND13_CONSERVATIVE)
		return cur_fail(c, c->rec, "object 0x%" PRIx64 " of no type has kind %" PRIu64
				" (want 0, no pointers, or 127, scanned conservatively)", addr, kind);
	for (uint64_t off = 0; size - off >= ps; off += ps)
		if ((rc = cur_object_ptr(c, addr + off)))
			return rc;
	return HR_OK;
}

/* go1.3: the pointer words of an object of type t (index type) and kind. */
static int typed_object(struct cursor *c, uint64_t addr, struct hr_bytes contents, uint32_t type,
			uint64_t kind)
{
	const struct hr_type_record *t = &c->d->dump.types[type];
	const struct field_range *r = &c->legacy->type_fields[type];
	uint64_t base = kind == KIND13_CHAN ? c->legacy->hchan_size : 0;
	int rc;

	if (kind != KIND13_SINGLE && kind != KIND13_ARRAY && kind != KIND13_CHAN)
		return cur_fail(c, c->rec, "object 0x%" PRIx64 " has kind %" PRIu64
				" (want 0 one value, 1 array, 2 channel)", addr, kind);
	if (kind == KIND13_SINGLE && t->size > contents.len)
		return cur_fail(c, c->rec, "object 0x%" PRIx64 " (%" PRIu64 " bytes) is smaller than "
				"its type 0x%" PRIx64 " (%" PRIu64 " bytes)", addr, contents.len, t->addr,
				t->size); /* not its name: any bytes, a newline too */
	if (kind == KIND13_SINGLE)
		rc = element_ptrs(c, addr, contents.ptr, 0, r);
	else if (t->size == 0 || r->n == 0)
		rc = HR_OK; /* elements without pointers */
	else
		for (rc = HR_OK; !rc && base <= contents.len && contents.len - base >= t->size; base += t->size)
			rc = element_ptrs(c, addr, contents.ptr, base, r);
	if (rc)
		return rc;
	return note_type(c, addr, type,
			 kind == KIND13_SINGLE ? OBJ_TYPE_SINGLE : kind == KIND13_ARRAY ? OBJ_TYPE_ARRAY
										  : OBJ_TYPE_CHAN);
}

static int parse_object13(struct cursor *c)
{
	struct hr_bytes contents;
	const uint8_t *at, *type_at;
	uint64_t addr, type_addr, kind;
	uint32_t type;
	int rc;

	if ((rc = cur_need_params(c)) || (rc = cur_uvarint(c, &addr, "address")))
		return rc;
	type_at = c->pos;
	if ((rc = cur_uvarint(c, &type_addr, "type address")) ||
	    (rc = cur_uvarint(c, &kind, "kind")))
		return rc;
	at = c->pos;
	if ((rc = cur_bytes(c, &contents, "contents")) ||
	    (rc = cur_add_object(c, addr, contents, at)))
		return rc;
	if (!type_addr)
		return untyped_object(c, addr, contents.len, kind);
	if (!map_get(&c->legacy->types, type_addr, &type))
		return cur_fail(c, type_at, "object 0x%" PRIx64 " names type 0x%" PRIx64
				", which no type record before it describes", addr, type_addr);
	return typed_object(c, addr, contents, type, kind);
}

record_parser legacy_parser(const struct cursor *c, unsigned kind)
{
	unsigned minor = c->d->dump.minor;

	switch (kind) {
	case HR_REC_PARAMS:
		return c->d->prov.prerelease ? parse_params_pre : parse_params_legacy;
	case HR_REC_TYPE:
		return minor == 3 ? parse_type13 : parse_type14;
	case HR_REC_ITAB:
		return minor == 3 ? parse_itab13 : parse_itab14;
	case HR_REC_OBJECT:
		return minor == 3 ? parse_object13 : NULL;
	default:
		return NULL;
	}
}

/* --- objects' types ------------------------------------------------------------------- */

/* Sets the notes' types on the objects they name; what an object's own record says first. */
static void apply_notes(struct hr_dump *d, const struct legacy *l, bool pointee)
{
	for (size_t i = 0; i < l->notes_n; i++) {
		const struct type_note *n = &l->notes[i];
		int64_t obj;

		if (((n->value & 3) == OBJ_TYPE_POINTEE) != pointee)
			continue;
		obj = heap_index_find(&d->heap, n->addr);
		if (obj < 0 || d->dump.obj_types[obj] != OBJ_TYPE_NONE ||
		    hr_dump_object(d, (size_t)obj).addr != n->addr)
			continue; /* an interior pointer says nothing of the object's type */
		d->dump.obj_types[obj] = n->value;
	}
}

int legacy_finish(struct cursor *c)
{
	struct hr_dump *d = c->d;

	d->dump.obj_types = calloc(d->heap.nobj + 1, sizeof(*d->dump.obj_types));
	if (!d->dump.obj_types)
		return hr_error_set(c->err, HR_ENOMEM, "%s: out of memory", d->path);
	apply_notes(d, c->legacy, false);
	apply_notes(d, c->legacy, true);
	return HR_OK;
}

bool hr_dump_has_object_types(const struct hr_dump *d)
{
	return d->dump.obj_types != NULL;
}

bool hr_dump_object_type(const struct hr_dump *d, size_t index, struct hr_object_type *out)
{
	static const char *const prefixes[] = { "", "[]", "chan ", "" };
	uint32_t v = d->dump.obj_types && index < d->heap.nobj ? d->dump.obj_types[index] : OBJ_TYPE_NONE;
	const struct hr_type_record *t;

	if (v == OBJ_TYPE_NONE)
		return false;
	t = &d->dump.types[(v >> 2) - 1];
	out->prefix = prefixes[v & 3];
	out->name = t->name;
	if ((v & 3) == OBJ_TYPE_POINTEE && t->name.len > 1 && t->name.ptr[0] == '*') {
		out->name.ptr++; /* an interface holding a *U points at a U */
		out->name.len--;
	}
	return true;
}
