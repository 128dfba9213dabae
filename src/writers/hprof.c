/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hprof.c - the reachable heap as a Java hprof file (format "JAVA PROFILE 1.0.2"), for
 * the Java heap tools (Eclipse MAT, VisualVM) and their dominator trees and paths to
 * GC roots. docs/hprof.md says what maps to what:
 *
 *   - an object the typed walk read as a Go type T (pass 1) is an instance of a class
 *     named T whose fields are T's DWARF members, flattened ("buf.array", "buf.len"),
 *     with the gaps and the tail of the size class as "$pad" fields;
 *   - pointer-free memory is an array of primitives (of the element's kind, or bytes);
 *   - other memory holding pointers (reached by bitmap only, or not fitting its type's
 *     class) is an object array of its words, pointers where the GC bitmap says, null
 *     elsewhere: "[]*T" when read as a slice of pointers, else "unsafe.Pointer[]";
 *   - every global with pointers is a class of its name whose static fields are its
 *     pointer words, a sticky-class root; each goroutine a thread object with its stack
 *     trace (one frame per Go function), its frames' pointer words Java-frame roots;
 *     finalizers and other roots are "unknown" roots.
 *
 * Only objects the scan reached are written, and every reference is a word the GC
 * bitmap marks as a pointer, so what a Java tool finds reachable is what heapref does.
 */
#include <stdlib.h>
#include <string.h>

#include "heapref/binary.h"
#include "heapref/writers.h"

/* Top-level record tags and heap dump sub-record tags of the format. */
enum {
	TAG_STRING = 0x01, TAG_LOAD_CLASS = 0x02, TAG_STACK_FRAME = 0x04, TAG_STACK_TRACE = 0x05,
	TAG_HEAP_DUMP_SEGMENT = 0x1c, TAG_HEAP_DUMP_END = 0x2c,
	SUB_ROOT_UNKNOWN = 0xff, SUB_ROOT_JAVA_FRAME = 0x03, SUB_ROOT_STICKY_CLASS = 0x05,
	SUB_ROOT_THREAD_OBJECT = 0x08, SUB_CLASS_DUMP = 0x20, SUB_INSTANCE_DUMP = 0x21,
	SUB_OBJECT_ARRAY_DUMP = 0x22, SUB_PRIMITIVE_ARRAY_DUMP = 0x23,
};

/* Basic types of fields and array elements. */
enum { T_OBJECT = 2, T_BOOLEAN = 4, T_FLOAT = 6, T_DOUBLE = 7, T_BYTE = 8, T_SHORT = 9,
       T_INT = 10, T_LONG = 11 };

#define ID_SIZE 8
#define TRACE_SERIAL 1             /* the one empty stack trace objects are allocated at */
#define SEGMENT_FLUSH (8u << 20)   /* bytes of heap dump buffered before a segment is written */
#define MAX_FIELDS 4096            /* more and a type's objects are written as words */
#define MAX_EXPANDED_ARRAY 64      /* arrays inside a type up to this long become fields */
#define NAME_MAX_LEN 256
/* Ids of classes and thread objects, far above any heap address (heap objects use theirs). */
#define CLASS_ID_BASE (UINT64_C(1) << 62)
#define THREAD_ID_BASE (UINT64_C(1) << 61)

struct buf {
	uint8_t *p;
	size_t n, cap;
	bool oom;
};

struct field {
	uint64_t name; /* string id */
	uint64_t off;
	uint32_t size;
	uint8_t type;
};

/* A class of instances: its fields, [first, first + count) of hprof.fields. */
struct klass {
	uint64_t id;
	uint64_t size;
	size_t first, count;
	uint64_t *ptr_words; /* bit per word: the fields of type object */
};

/* A string-keyed hash table: names to string ids, class keys to class numbers. */
struct slot {
	char *key;
	uint64_t value;
};
struct table {
	struct slot *slots;
	size_t n, cap;
};

struct hprof {
	FILE *out;
	const struct hr_dump *dump;
	const struct hr_image *img;   /* the binary where the process loaded it */
	const struct hr_binary *bin;  /* img->bin */
	const struct hr_scan_result *result;
	struct hr_error *err;
	unsigned ptr;
	struct buf roots, cls, seg, rec; /* heap dump parts: roots, class dumps, instances */
	bool streaming;                   /* roots and classes written: seg may be flushed */
	struct table strings, class_of;
	uint64_t next_string, next_class;
	uint32_t next_serial;
	struct field *fields;
	size_t nfields, fields_cap;
	struct klass *classes;
	size_t nclasses, classes_cap;
	uint64_t object_class;          /* java.lang.Object: every class's super */
	uint64_t prim_class[T_LONG + 1]; /* the primitive array classes */
	uint64_t *bits;                 /* scratch: an object's pointer bits */
	uint64_t bits_words;
};

/* --- bytes, big-endian ------------------------------------------------------------------ */

static void put(struct buf *b, const void *p, size_t n)
{
	if (b->oom || hr_array_reserve((void **)&b->p, &b->cap, b->n + n, 1)) {
		b->oom = true;
		return;
	}
	memcpy(b->p + b->n, p, n);
	b->n += n;
}

static void put_be(struct buf *b, uint64_t v, unsigned size)
{
	uint8_t x[8];

	for (unsigned i = 0; i < size; i++)
		x[i] = (uint8_t)(v >> (8 * (size - 1 - i)));
	put(b, x, size);
}

static void put_u1(struct buf *b, uint64_t v) { put_be(b, v, 1); }
static void put_u2(struct buf *b, uint64_t v) { put_be(b, v, 2); }
static void put_u4(struct buf *b, uint64_t v) { put_be(b, v, 4); }
static void put_id(struct buf *b, uint64_t v) { put_be(b, v, ID_SIZE); }

/* Reads size bytes of the dump's memory at p as an unsigned number, in its byte order. */
static uint64_t read_le_or_be(const struct hprof *h, const uint8_t *p, unsigned size)
{
	uint64_t v = 0;
	bool big = hr_dump_params(h->dump)->big_endian;

	for (unsigned i = 0; i < size; i++)
		v |= (uint64_t)p[big ? size - 1 - i : i] << (8 * i);
	return v;
}

static int out_of_memory(struct hprof *h)
{
	return hr_error_set(h->err, HR_ENOMEM, "out of memory writing the hprof file");
}

/* Writes the top-level record in h->rec with tag. */
static int write_record(struct hprof *h, unsigned tag, const struct buf *body)
{
	uint8_t head[9] = { (uint8_t)tag, 0, 0, 0, 0, (uint8_t)(body->n >> 24),
			    (uint8_t)(body->n >> 16), (uint8_t)(body->n >> 8), (uint8_t)body->n };

	if (body->oom)
		return out_of_memory(h);
	if (body->n > UINT32_MAX)
		return hr_error_set(h->err, HR_EUSAGE, "an hprof record over 4 GiB");
	if (fwrite(head, 1, sizeof(head), h->out) != sizeof(head) ||
	    fwrite(body->p, 1, body->n, h->out) != body->n)
		return hr_error_set(h->err, HR_EIO, "write error");
	return HR_OK;
}

static int flush_segment(struct hprof *h, struct buf *b)
{
	int rc = b->n ? write_record(h, TAG_HEAP_DUMP_SEGMENT, b) : HR_OK;

	b->n = 0;
	return rc;
}

static int roots_done(struct hprof *h)
{
	return h->roots.oom ? out_of_memory(h) : HR_OK;
}

static int segment_done_with_record(struct hprof *h)
{
	if (h->seg.oom)
		return out_of_memory(h);
	return h->streaming && h->seg.n >= SEGMENT_FLUSH ? flush_segment(h, &h->seg) : HR_OK;
}

/* --- the hash table ---------------------------------------------------------------------- */

static uint64_t hash_of(const char *s)
{
	uint64_t x = 1469598103934665603u;

	while (*s)
		x = (x ^ (uint8_t)*s++) * 1099511628211u;
	return x;
}

static struct slot *table_slot(const struct table *t, const char *key)
{
	size_t i = hash_of(key) & (t->cap - 1);

	while (t->slots[i].key && strcmp(t->slots[i].key, key))
		i = (i + 1) & (t->cap - 1);
	return &t->slots[i];
}

static bool table_grow(struct table *t)
{
	struct table bigger = { calloc(t->cap ? t->cap * 2 : 256, sizeof(struct slot)), t->n,
				t->cap ? t->cap * 2 : 256 };

	if (!bigger.slots)
		return false;
	for (size_t i = 0; i < t->cap; i++)
		if (t->slots[i].key)
			*table_slot(&bigger, t->slots[i].key) = t->slots[i];
	free(t->slots);
	*t = bigger;
	return true;
}

/* The value of key, or 0. */
static uint64_t table_get(const struct table *t, const char *key)
{
	return t->cap ? table_slot(t, key)->value : 0;
}

static bool table_put(struct table *t, const char *key, uint64_t value)
{
	struct slot *s;

	if ((t->n + 1) * 2 > t->cap && !table_grow(t))
		return false;
	s = table_slot(t, key);
	if (!s->key) {
		if (!(s->key = strdup(key)))
			return false;
		t->n++;
	}
	s->value = value;
	return true;
}

static void table_free(struct table *t)
{
	for (size_t i = 0; i < t->cap; i++)
		free(t->slots[i].key);
	free(t->slots);
}

/* --- strings, classes ------------------------------------------------------------------------ */

/* The id of string s, writing its STRING record the first time; 0 when out of memory. */
static uint64_t string_id(struct hprof *h, const char *s)
{
	uint64_t id = table_get(&h->strings, s);

	if (id)
		return id;
	id = ++h->next_string;
	h->rec.n = 0;
	put_id(&h->rec, id);
	put(&h->rec, s, strlen(s));
	if (write_record(h, TAG_STRING, &h->rec) || !table_put(&h->strings, s, id))
		return 0;
	return id;
}

/* Writes LOAD CLASS for a new class id named name; its serial, 0 on failure. */
static uint32_t load_class(struct hprof *h, uint64_t id, const char *name)
{
	uint64_t sid = string_id(h, name);

	if (!sid)
		return 0;
	h->rec.n = 0;
	put_u4(&h->rec, ++h->next_serial);
	put_id(&h->rec, id);
	put_u4(&h->rec, TRACE_SERIAL);
	put_id(&h->rec, sid);
	return write_record(h, TAG_LOAD_CLASS, &h->rec) ? 0 : h->next_serial;
}

/* A static field: its name and the object it refers to. */
struct static_ref {
	uint64_t name;
	uint64_t obj;
};

/*
 * A new class named name: LOAD CLASS, and its CLASS DUMP with the fields
 * fields[0..nfields) and the static references statics[0..nstatics). Its id, or 0 with
 * h->err set.
 */
static uint64_t new_class(struct hprof *h, const char *name, uint64_t super, uint64_t size,
			  const struct field *fields, size_t nfields,
			  const struct static_ref *statics, size_t nstatics)
{
	uint64_t id = CLASS_ID_BASE + 8 * ++h->next_class;

	if (!load_class(h, id, name))
		return h->err->code ? 0 : (out_of_memory(h), 0);
	put_u1(&h->cls, SUB_CLASS_DUMP);
	put_id(&h->cls, id);
	put_u4(&h->cls, TRACE_SERIAL);
	put_id(&h->cls, super);
	for (int i = 0; i < 5; i++) /* loader, signers, protection domain, reserved */
		put_id(&h->cls, 0);
	put_u4(&h->cls, size);
	put_u2(&h->cls, 0); /* constant pool */
	put_u2(&h->cls, nstatics);
	for (size_t i = 0; i < nstatics; i++) {
		put_id(&h->cls, statics[i].name);
		put_u1(&h->cls, T_OBJECT);
		put_id(&h->cls, statics[i].obj);
	}
	put_u2(&h->cls, nfields);
	for (size_t i = 0; i < nfields; i++) {
		put_id(&h->cls, fields[i].name);
		put_u1(&h->cls, fields[i].type);
	}
	return h->cls.oom ? (out_of_memory(h), 0) : id;
}

/* java.lang.Object and the classes of the primitive arrays ("[B" is byte[]). */
static int base_classes(struct hprof *h)
{
	static const struct { uint8_t type; const char *name; } prims[] = {
		{ T_BOOLEAN, "[Z" }, { T_FLOAT, "[F" }, { T_DOUBLE, "[D" }, { T_BYTE, "[B" },
		{ T_SHORT, "[S" },   { T_INT, "[I" },   { T_LONG, "[J" },
	};

	struct field referent = { string_id(h, "referent"), 0, 8, T_OBJECT };

	if (!referent.name ||
	    !(h->object_class = new_class(h, "java.lang.Object", 0, 0, NULL, 0, NULL, 0)))
		return h->err->code ? h->err->code : out_of_memory(h);
	static const char *const refs[] = { "java.lang.ref.WeakReference",
					    "java.lang.ref.SoftReference",
					    "java.lang.ref.FinalReference",
					    "java.lang.ref.PhantomReference" };
	uint64_t reference;

	/* no instances, but readers that skip weak references look for them and the field */
	if (!(reference = new_class(h, "java.lang.ref.Reference", h->object_class, 8, &referent,
				    1, NULL, 0)))
		return h->err->code;
	/* the class of class objects: the roots of globals are class objects */
	if (!new_class(h, "java.lang.Class", h->object_class, 0, NULL, 0, NULL, 0))
		return h->err->code;
	for (size_t i = 0; i < sizeof(refs) / sizeof(refs[0]); i++)
		if (!new_class(h, refs[i], reference, 0, NULL, 0, NULL, 0))
			return h->err->code;
	for (size_t i = 0; i < sizeof(prims) / sizeof(prims[0]); i++)
		if (!(h->prim_class[prims[i].type] =
			      new_class(h, prims[i].name, h->object_class, 0, NULL, 0, NULL, 0)))
			return h->err->code;
	return HR_OK;
}

/* --- a Go type's fields ---------------------------------------------------------------------- */

/* The basic type of a Go kind of this size; 0 for none (not a scalar). */
static uint8_t scalar_type(unsigned kind, uint64_t size)
{
	switch (kind) {
	case HR_KIND_BOOL:
		return T_BOOLEAN;
	case HR_KIND_FLOAT32:
		return T_FLOAT;
	case HR_KIND_FLOAT64:
		return T_DOUBLE;
	case HR_KIND_INT: case HR_KIND_INT8: case HR_KIND_INT16: case HR_KIND_INT32:
	case HR_KIND_INT64: case HR_KIND_UINT: case HR_KIND_UINT8: case HR_KIND_UINT16:
	case HR_KIND_UINT32: case HR_KIND_UINT64: case HR_KIND_UINTPTR:
		return size == 1 ? T_BYTE : size == 2 ? T_SHORT : size == 4 ? T_INT
		       : size == 8 ? T_LONG : 0;
	default:
		return 0;
	}
}

static bool is_pointer_word(const struct hr_type *t)
{
	return t->shape == HR_SHAPE_POINTER || t->kind == HR_KIND_PTR || t->kind == HR_KIND_MAP ||
	       t->kind == HR_KIND_CHAN || t->kind == HR_KIND_FUNC ||
	       t->kind == HR_KIND_UNSAFE_POINTER;
}

/* A piece of a type still to be split into fields. */
struct piece {
	uint32_t type;
	uint64_t off;
	char name[NAME_MAX_LEN];
};

/* A leaf: a field of name at off. */
struct leaf {
	uint64_t off;
	uint32_t size;
	uint8_t type;
	char name[NAME_MAX_LEN];
};

struct leaves {
	struct leaf *v;
	size_t n, cap;
	struct piece *todo;
	size_t ntodo, todo_cap;
};

static bool push_piece(struct leaves *l, uint32_t type, uint64_t off, const char *prefix,
		       const char *sep, const char *name)
{
	struct piece *p = hr_array_push((void **)&l->todo, &l->ntodo, &l->todo_cap, sizeof(*p));

	if (!p)
		return false;
	p->type = type;
	p->off = off;
	/* a name cut at NAME_MAX_LEN still names the field */
	return snprintf(p->name, sizeof(p->name), "%s%s%s", prefix, prefix[0] ? sep : "", name) >= 0;
}

static bool add_leaf(struct leaves *l, uint64_t off, uint64_t size, uint8_t type, const char *name)
{
	struct leaf *f = hr_array_push((void **)&l->v, &l->n, &l->cap, sizeof(*f));

	if (!f)
		return false;
	*f = (struct leaf){ off, (uint32_t)size, type, "" };
	snprintf(f->name, sizeof(f->name), "%s", name[0] ? name : "value");
	return true;
}

/* Splits piece p one level: its members or elements back on the stack, or a leaf. */
static bool split_piece(const struct hprof *h, struct leaves *l, struct piece p)
{
	uint32_t id = hr_binary_resolve_typedef(h->bin, p.type);
	const struct hr_type *t = hr_binary_type(h->bin, id);
	uint8_t scalar = scalar_type(t->kind, t->size);

	if (t->size == 0)
		return true;
	if (is_pointer_word(t) && t->size == h->ptr)
		return add_leaf(l, p.off, h->ptr, T_OBJECT, p.name);
	if (t->shape == HR_SHAPE_STRUCT) {
		for (uint32_t i = t->member_count; i-- > 0;) {
			const struct hr_member *m = hr_binary_member(h->bin, t->first_member + i);

			if (!push_piece(l, m->type, p.off + m->offset, p.name, ".", m->name))
				return false;
		}
		return true;
	}
	if (t->shape == HR_SHAPE_ARRAY && (t->flags & HR_TYPE_HAS_COUNT) &&
	    t->count <= MAX_EXPANDED_ARRAY) {
		uint64_t esize = hr_binary_type(h->bin, hr_binary_resolve_typedef(h->bin, t->elem))->size;

		for (uint64_t i = t->count; i-- > 0;) {
			char index[32];

			snprintf(index, sizeof(index), "[%llu]", (unsigned long long)i);
			if (!push_piece(l, t->elem, p.off + i * esize, p.name, "", index))
				return false;
		}
		return true;
	}
	if (scalar)
		return add_leaf(l, p.off, t->size, scalar, p.name);
	/* complex numbers, long arrays: bytes, padded like the gaps */
	return add_leaf(l, p.off, t->size, 0, p.name);
}

/*
 * The leaves of type, depth first: 0, 1 when it has too many to make a class, or
 * HR_ENOMEM.
 */
static int type_leaves(const struct hprof *h, uint32_t type, struct leaves *l)
{
	l->n = l->ntodo = 0;
	if (!push_piece(l, type, 0, "", "", ""))
		return HR_ENOMEM;
	while (l->ntodo > 0 && l->n < MAX_FIELDS)
		if (!split_piece(h, l, l->todo[--l->ntodo]))
			return HR_ENOMEM;
	return l->ntodo == 0 ? 0 : 1;
}

static int leaf_by_offset(const void *a, const void *b)
{
	const struct leaf *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

/* Adds a field to h->fields; false when out of memory or a string cannot be written. */
static bool add_field(struct hprof *h, const char *name, uint64_t off, uint32_t size, uint8_t type)
{
	uint64_t sid = string_id(h, name);
	struct field *f;

	if (!sid)
		return false;
	f = hr_array_push((void **)&h->fields, &h->nfields, &h->fields_cap, sizeof(*f));
	if (!f)
		return false;
	*f = (struct field){ sid, off, size, type };
	return true;
}

/* Fills [from, to) with "$pad" fields: longs where aligned, bytes elsewhere. */
static bool add_padding(struct hprof *h, uint64_t from, uint64_t to)
{
	char name[48];

	while (from < to) {
		bool word = from % 8 == 0 && to - from >= 8;

		snprintf(name, sizeof(name), "$pad%llu", (unsigned long long)from);
		if (!add_field(h, name, from, word ? 8 : 1, word ? T_LONG : T_BYTE))
			return false;
		from += word ? 8 : 1;
	}
	return true;
}

/*
 * Turns the sorted leaves into h->fields from h->nfields on, covering [0, size) with
 * padding; false when leaves overlap or pass size (then the type does not fit).
 */
static bool leaves_to_fields(struct hprof *h, struct leaves *l, uint64_t size, bool *fits)
{
	uint64_t at = 0;

	*fits = false;
	qsort(l->v, l->n, sizeof(*l->v), leaf_by_offset);
	for (size_t i = 0; i < l->n; i++) {
		const struct leaf *f = &l->v[i];

		if (f->off < at || f->off + f->size > size)
			return true;
		if (!add_padding(h, at, f->off))
			return false;
		if (f->type ? !add_field(h, f->name, f->off, f->size, f->type)
			    : !add_padding(h, f->off, f->off + f->size))
			return false;
		at = f->off + f->size;
	}
	if (!add_padding(h, at, size))
		return false;
	*fits = h->nfields <= UINT16_MAX;
	return true;
}

/*
 * The class name of a Go type: its name, but for a leading '[', which readers take for
 * a JVM array descriptor ("[B"): "[]T" is written "slice<T>" (as the compiler's own
 * "map<K,V>", "hchan<T>"), "[N]T" "array[N]T".
 */
static int type_name_into(const struct hprof *h, uint32_t type, char *buf, size_t len)
{
	const char *name = hr_binary_type(h->bin, type)->name;

	if (!strncmp(name, "[]", 2))
		return snprintf(buf, len, "slice<%s>", name + 2);
	if (name[0] == '[')
		return snprintf(buf, len, "array%s", name);
	return snprintf(buf, len, "%s", name[0] ? name : "(unnamed)");
}

/*
 * The class of objects of type read as one T, of size bytes: made the first time.
 * *k NULL when T does not make a class (too many fields, overlapping members). 0 or
 * HR_E*.
 */
static int class_for_type(struct hprof *h, uint32_t type, uint64_t size, struct leaves *l,
			  struct klass **k)
{
	char key[64], name[NAME_MAX_LEN];
	uint64_t known;
	size_t first = h->nfields;
	bool fits;
	struct klass *c;
	int rc;

	snprintf(key, sizeof(key), "%u/%llu", type, (unsigned long long)size);
	known = table_get(&h->class_of, key);
	*k = known == UINT64_MAX ? NULL : known ? &h->classes[known - 1] : NULL;
	if (known)
		return HR_OK;
	rc = type_leaves(h, type, l);
	if (rc < 0)
		return out_of_memory(h);
	fits = false;
	if (rc == 0 && !leaves_to_fields(h, l, size, &fits))
		return h->err->code ? h->err->code : out_of_memory(h);
	if (!fits) {
		h->nfields = first;
		return table_put(&h->class_of, key, UINT64_MAX) ? HR_OK : out_of_memory(h);
	}
	if (!(c = hr_array_push((void **)&h->classes, &h->nclasses, &h->classes_cap, sizeof(*c))) ||
	    !(c->ptr_words = calloc(hr_bit_words(size / h->ptr + 1), sizeof(uint64_t))))
		return out_of_memory(h);
	c->size = size, c->first = first, c->count = h->nfields - first;
	for (size_t i = first; i < h->nfields; i++)
		if (h->fields[i].type == T_OBJECT && h->fields[i].off % h->ptr == 0)
			hr_bit_set(c->ptr_words, h->fields[i].off / h->ptr);
	type_name_into(h, type, name, sizeof(name));
	c->id = new_class(h, name, h->object_class, size, h->fields + first, c->count, NULL, 0);
	if (!c->id)
		return h->err->code;
	if (!table_put(&h->class_of, key, h->nclasses))
		return out_of_memory(h);
	*k = c;
	return HR_OK;
}

/* The class of object arrays named name (JVM style, "[Lunsafe.Pointer;"), made once. */
static uint64_t array_class(struct hprof *h, const char *name)
{
	uint64_t id = table_get(&h->class_of, name);

	if (id)
		return id;
	id = new_class(h, name, h->object_class, 0, NULL, 0, NULL, 0);
	if (id && !table_put(&h->class_of, name, id))
		return out_of_memory(h), 0;
	return id;
}

/* --- objects ------------------------------------------------------------------------------------ */

static bool exported(const struct hprof *h, int64_t i)
{
	return i >= 0 && hr_result_reached_by(h->result, (uint32_t)i).node != HR_CHAINS_NONE;
}

/* What the word value refers to: the start of the exported heap object holding it, or 0. */
static uint64_t ref_of(const struct hprof *h, uint64_t value)
{
	uint64_t start, size;
	int64_t i = hr_dump_object_span_at(h->dump, value, &start, &size);

	return exported(h, i) ? start : 0;
}

/* The reference held by pointer word w of object o, by the bitmap; 0 if none. */
static uint64_t word_ref(const struct hprof *h, struct hr_object o, uint64_t w)
{
	return hr_bit_get(h->bits, w) ? ref_of(h, hr_dump_word(h->dump, o.data + w * h->ptr)) : 0;
}

static void object_header(struct hprof *h, unsigned tag, uint64_t addr)
{
	put_u1(&h->seg, tag);
	put_id(&h->seg, addr);
	put_u4(&h->seg, TRACE_SERIAL);
}

static int write_instance(struct hprof *h, struct hr_object o, const struct klass *k)
{
	object_header(h, SUB_INSTANCE_DUMP, o.addr);
	put_id(&h->seg, k->id);
	put_u4(&h->seg, o.size);
	for (size_t i = k->first; i < k->first + k->count; i++) {
		const struct field *f = &h->fields[i];

		if (f->type == T_OBJECT)
			put_id(&h->seg, f->off % h->ptr ? 0 : word_ref(h, o, f->off / h->ptr));
		else
			put_be(&h->seg, read_le_or_be(h, o.data + f->off, f->size), f->size);
	}
	return segment_done_with_record(h);
}

static int write_primitive_array(struct hprof *h, struct hr_object o, uint8_t type, unsigned esize)
{
	uint64_t n = o.size / esize;

	object_header(h, SUB_PRIMITIVE_ARRAY_DUMP, o.addr);
	put_u4(&h->seg, n);
	put_u1(&h->seg, type);
	if (esize == 1 || type == T_BOOLEAN)
		put(&h->seg, o.data, n);
	else
		for (uint64_t i = 0; i < n; i++)
			put_be(&h->seg, read_le_or_be(h, o.data + i * esize, esize), esize);
	return segment_done_with_record(h);
}

static int write_word_array(struct hprof *h, struct hr_object o, uint64_t class_id)
{
	uint64_t n = o.size / h->ptr;

	object_header(h, SUB_OBJECT_ARRAY_DUMP, o.addr);
	put_u4(&h->seg, n);
	put_id(&h->seg, class_id);
	for (uint64_t w = 0; w < n; w++)
		put_id(&h->seg, word_ref(h, o, w));
	return segment_done_with_record(h);
}

static bool is_struct(const struct hprof *h, uint32_t type)
{
	return hr_binary_type(h->bin, hr_binary_resolve_typedef(h->bin, type))->shape == HR_SHAPE_STRUCT;
}

/* Whether every pointer word of the object is a field of type object of class k. */
static bool class_holds_pointers(const struct hprof *h, const struct klass *k, uint64_t words)
{
	for (uint64_t w = hr_bit_next(h->bits, 0, words); w < words; w = hr_bit_next(h->bits, w + 1, words))
		if (!hr_bit_get(k->ptr_words, w))
			return false;
	return true;
}

/* A pointer-free object: an array of its type's scalars when they tile it, else bytes. */
static int write_pointer_free(struct hprof *h, struct hr_object o, uint32_t type)
{
	const struct hr_type *t = hr_binary_type(h->bin, hr_binary_resolve_typedef(h->bin, type));
	uint8_t scalar;

	if (t->shape == HR_SHAPE_ARRAY) /* [N]T read as one: its Ts */
		t = hr_binary_type(h->bin, hr_binary_resolve_typedef(h->bin, t->elem));
	scalar = scalar_type(t->kind, t->size);
	if (scalar && t->size && o.size % t->size == 0)
		return write_primitive_array(h, o, scalar, (unsigned)t->size);
	return write_primitive_array(h, o, T_BYTE, 1);
}

/* An array of pointers to T is "[L*T;" (shown as *T[]), other words "unsafe.Pointer[]". */
static uint64_t words_class(struct hprof *h, uint32_t type, bool array)
{
	char name[NAME_MAX_LEN + 8] = "[Lunsafe.Pointer;";
	const struct hr_type *t = hr_binary_type(h->bin, hr_binary_resolve_typedef(h->bin, type));

	if (type && array && is_pointer_word(t) && t->size == h->ptr) {
		char tn[NAME_MAX_LEN];

		type_name_into(h, type, tn, sizeof(tn));
		snprintf(name, sizeof(name), "[L%s;", tn);
	}
	return array_class(h, name);
}

/* Writes object i, or with classes_only makes the class it needs. */
static int write_object(struct hprof *h, uint32_t i, struct leaves *l, bool classes_only)
{
	struct hr_object o = hr_dump_object(h->dump, i);
	uint64_t words = o.size / h->ptr, class_id;
	bool array;
	uint32_t type = hr_result_type_of(h->result, i, &array);
	struct klass *k = NULL;
	int rc;

	if (hr_bit_words(words) > h->bits_words) {
		free(h->bits);
		h->bits_words = hr_bit_words(words);
		if (!(h->bits = malloc(h->bits_words * sizeof(uint64_t))))
			return out_of_memory(h);
	}
	if (o.size > UINT32_MAX - 64) /* its sub-record must fit a segment's 32-bit length */
		return hr_error_set(h->err, HR_EUSAGE, "object at 0x%llx is over 4 GiB: hprof cannot hold it",
				    (unsigned long long)o.addr);
	/* a big object alone in its segment, so that no segment passes 4 GiB */
	if (!classes_only && o.size >= SEGMENT_FLUSH && flush_segment(h, &h->seg))
		return h->err->code;
	hr_dump_object_ptr_bits(h->dump, i, h->bits);
	if (type && !array && is_struct(h, type) && (rc = class_for_type(h, type, o.size, l, &k)))
		return rc;
	if (k && class_holds_pointers(h, k, words))
		return classes_only ? HR_OK : write_instance(h, o, k);
	if (hr_bit_next(h->bits, 0, words) >= words)
		return classes_only ? HR_OK : write_pointer_free(h, o, type);
	if (!(class_id = words_class(h, type, array)))
		return h->err->code;
	return classes_only ? HR_OK : write_word_array(h, o, class_id);
}

/*
 * Every exported object, or with classes_only the classes they need: readers want the
 * class dumps before the instances.
 */
static int write_objects(struct hprof *h, bool classes_only)
{
	struct leaves l = { 0 };
	size_t n = hr_dump_object_count(h->dump);
	int rc = HR_OK;

	for (size_t i = 0; i < n && !rc; i++)
		if (exported(h, (int64_t)i))
			rc = write_object(h, (uint32_t)i, &l, classes_only);
	free(l.v);
	free(l.todo);
	return rc;
}

/* --- roots: globals ------------------------------------------------------------------------------ */

/* "buf.len", "items[3]": the member path of offset off inside type (at most 32 levels). */
static void member_path(const struct hprof *h, uint32_t type, uint64_t off, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = 0;
	for (int depth = 0; depth < 32 && n < len; depth++) {
		const struct hr_type *t = hr_binary_type(h->bin, hr_binary_resolve_typedef(h->bin, type));
		const struct hr_member *in = NULL;
		uint64_t esize;

		if (t->shape == HR_SHAPE_STRUCT) {
			for (uint32_t i = 0; i < t->member_count; i++) {
				const struct hr_member *m = hr_binary_member(h->bin, t->first_member + i);
				uint64_t size = hr_binary_type(h->bin, hr_binary_resolve_typedef(h->bin, m->type))->size;

				if (m->offset <= off && off < m->offset + size)
					in = m;
			}
			if (!in)
				break;
			n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? "." : "", in->name);
			type = in->type, off -= in->offset;
		} else if (t->shape == HR_SHAPE_ARRAY &&
			   (esize = hr_binary_type(h->bin, hr_binary_resolve_typedef(h->bin, t->elem))->size)) {
			n += (size_t)snprintf(buf + n, len - n, "[%llu]", (unsigned long long)(off / esize));
			type = t->elem, off %= esize;
		} else {
			break;
		}
	}
	if (off && n < len)
		snprintf(buf + n, len - n, "%s+%llu", n ? "" : "", (unsigned long long)off);
	else if (!n)
		snprintf(buf, len, "value");
}

/* What holds a data or bss word: a global's name and the word's path in it, or a symbol. */
static void static_word_name(const struct hprof *h, uint64_t addr, char *owner, char *field,
			     size_t len)
{
	const struct hr_global *g = hr_image_global_at(h->img, addr);
	const struct hr_symbol *s;

	if (g) {
		snprintf(owner, len, "%s", g->name);
		member_path(h, g->type, addr - hr_image_runtime(h->img, g->addr), field, len);
	} else if ((s = hr_image_symbol_at(h->img, addr))) {
		snprintf(owner, len, "%s", s->name);
		snprintf(field, len, "+%llu",
			 (unsigned long long)(addr - hr_image_runtime(h->img, s->addr)));
	} else {
		snprintf(owner, len, "$data");
		snprintf(field, len, "0x%llx", (unsigned long long)addr);
	}
}

/* The class of a global (or symbol) with its pointer words as statics, a sticky class root. */
static int global_class(struct hprof *h, const char *owner, const struct static_ref *refs, size_t n)
{
	uint64_t id;

	if (!(id = new_class(h, owner, h->object_class, 0, NULL, 0, refs, n)))
		return h->err->code;
	put_u1(&h->roots, SUB_ROOT_STICKY_CLASS);
	put_id(&h->roots, id);
	return roots_done(h);
}

/* The pointer words of a data or bss segment as classes of globals. */
static int write_segment_roots(struct hprof *h, const struct hr_segment *seg)
{
	char owner[NAME_MAX_LEN] = "", cur[NAME_MAX_LEN] = "", field[NAME_MAX_LEN];
	struct static_ref *refs = NULL;
	size_t n = 0, cap = 0;
	uint64_t words = seg->present ? seg->contents.len / h->ptr : 0;
	int rc = HR_OK;

	for (uint64_t w = hr_bit_next(seg->ptr_bits, 0, words); w < words && !rc;
	     w = hr_bit_next(seg->ptr_bits, w + 1, words)) {
		uint64_t ref = ref_of(h, hr_dump_word(h->dump, seg->contents.ptr + w * h->ptr));
		struct static_ref *r;

		if (!ref)
			continue;
		static_word_name(h, seg->addr + w * h->ptr, owner, field, sizeof(field));
		/* a class holds at most 65535 statics: a bigger global takes several */
		if (n && (strcmp(owner, cur) || n == UINT16_MAX)) {
			rc = global_class(h, cur, refs, n);
			n = 0;
		}
		snprintf(cur, sizeof(cur), "%s", owner);
		if (!(r = hr_array_push((void **)&refs, &n, &cap, sizeof(*r))))
			rc = out_of_memory(h);
		else if (!(r->name = string_id(h, field)))
			rc = h->err->code ? h->err->code : out_of_memory(h);
		else
			r->obj = ref;
	}
	if (!rc && n)
		rc = global_class(h, cur, refs, n);
	free(refs);
	return rc;
}

/* --- roots: goroutines and the rest ---------------------------------------------------------------- */

/* STACK FRAME and STACK TRACE records of goroutine g: one frame per function on its stack. */
static int write_stack_trace(struct hprof *h, const struct hr_goroutine *g, uint32_t serial,
			     uint32_t thread, uint32_t class_serial)
{
	const struct hr_frame *frames = hr_dump_frames(h->dump, &(size_t){ 0 });
	uint64_t unknown = string_id(h, "()"), base = THREAD_ID_BASE + ((uint64_t)serial << 32);
	uint64_t method;
	char name[NAME_MAX_LEN];

	for (uint32_t i = 0; i < g->frame_count; i++) {
		const struct hr_frame *f = &frames[g->first_frame + i];

		snprintf(name, sizeof(name), "%.*s", (int)f->func_name.len, (const char *)f->func_name.ptr);
		if (!unknown || !(method = string_id(h, name)))
			return h->err->code ? h->err->code : out_of_memory(h);
		h->rec.n = 0;
		put_id(&h->rec, base + 8 * (i + 1));
		put_id(&h->rec, method);
		put_id(&h->rec, unknown);
		put_id(&h->rec, unknown);
		put_u4(&h->rec, class_serial);
		put_u4(&h->rec, 0);
		if (write_record(h, TAG_STACK_FRAME, &h->rec))
			return h->err->code;
	}
	h->rec.n = 0;
	put_u4(&h->rec, serial);
	put_u4(&h->rec, thread);
	put_u4(&h->rec, g->frame_count);
	for (uint32_t i = 0; i < g->frame_count; i++)
		put_id(&h->rec, base + 8 * (i + 1));
	return write_record(h, TAG_STACK_TRACE, &h->rec);
}

/* Java-frame roots for the pointer words of goroutine g's frames. */
static int write_frame_roots(struct hprof *h, const struct hr_goroutine *g, uint32_t thread)
{
	const struct hr_frame *frames = hr_dump_frames(h->dump, &(size_t){ 0 });

	for (uint32_t i = 0; i < g->frame_count; i++) {
		const struct hr_frame *f = &frames[g->first_frame + i];
		uint64_t words = f->contents.len / h->ptr;

		for (uint64_t w = 0; w < words; w++) {
			uint64_t ref = hr_dump_frame_ptr_bit(h->dump, f, w)
					       ? ref_of(h, hr_dump_word(h->dump, f->contents.ptr + w * h->ptr))
					       : 0;

			if (!ref)
				continue;
			put_u1(&h->roots, SUB_ROOT_JAVA_FRAME);
			put_id(&h->roots, ref);
			put_u4(&h->roots, thread);
			put_u4(&h->roots, i);
			if (roots_done(h))
				return h->err->code;
		}
	}
	return HR_OK;
}

/*
 * Each goroutine: a thread object, an instance of a class "goroutine N" with its id,
 * status and first function, a thread root, its stack trace and its frames' roots.
 */
static int write_goroutine(struct hprof *h, const struct hr_goroutine *g, uint32_t thread)
{
	const struct hr_frame *frames = hr_dump_frames(h->dump, &(size_t){ 0 });
	char name[NAME_MAX_LEN];
	uint64_t id, obj = THREAD_ID_BASE + ((uint64_t)thread << 32);
	uint32_t trace, class_serial;
	struct field f[2];

	if (g->frame_count)
		snprintf(name, sizeof(name), "goroutine %llu (%.*s)", (unsigned long long)g->goid,
			 (int)frames[g->first_frame].func_name.len,
			 (const char *)frames[g->first_frame].func_name.ptr);
	else
		snprintf(name, sizeof(name), "goroutine %llu", (unsigned long long)g->goid);
	f[0] = (struct field){ string_id(h, "goid"), 0, 8, T_LONG };
	f[1] = (struct field){ string_id(h, "status"), 8, 8, T_LONG };
	if (!f[0].name || !f[1].name || !(id = new_class(h, name, h->object_class, 16, f, 2, NULL, 0)))
		return h->err->code ? h->err->code : out_of_memory(h);
	class_serial = h->next_serial;
	trace = ++h->next_serial;
	if (write_stack_trace(h, g, trace, thread, class_serial))
		return h->err->code;
	object_header(h, SUB_INSTANCE_DUMP, obj);
	put_id(&h->seg, id);
	put_u4(&h->seg, 16);
	put_be(&h->seg, g->goid, 8);
	put_be(&h->seg, g->status, 8);
	put_u1(&h->roots, SUB_ROOT_THREAD_OBJECT);
	put_id(&h->roots, obj);
	put_u4(&h->roots, thread);
	put_u4(&h->roots, trace);
	if (roots_done(h))
		return h->err->code;
	return segment_done_with_record(h) ? h->err->code : write_frame_roots(h, g, thread);
}

static int unknown_root(struct hprof *h, uint64_t value)
{
	uint64_t ref = ref_of(h, value);

	if (!ref)
		return HR_OK;
	put_u1(&h->roots, SUB_ROOT_UNKNOWN);
	put_id(&h->roots, ref);
	return roots_done(h);
}

/* Finalizers (their objects and what their functions point to) and other roots. */
static int write_other_roots(struct hprof *h)
{
	size_t n, i;
	const struct hr_finalizer *fin = hr_dump_finalizers(h->dump, &n);
	int rc = HR_OK;

	for (i = 0; i < n && !rc; i++)
		rc = unknown_root(h, fin[i].obj) || unknown_root(h, fin[i].fn) ? h->err->code : HR_OK;
	fin = hr_dump_queued_finalizers(h->dump, &n);
	for (i = 0; i < n && !rc; i++)
		rc = unknown_root(h, fin[i].obj) || unknown_root(h, fin[i].fn) ? h->err->code : HR_OK;
	const struct hr_other_root *other = hr_dump_other_roots(h->dump, &n);
	for (i = 0; i < n && !rc; i++)
		rc = unknown_root(h, other[i].ptr);
	return rc;
}

/*
 * A dump that gives its roots as pointers (the pre-release go1.3 layout): data roots as
 * unknown roots, stack roots as Java-frame roots of their goroutine's thread.
 */
static int write_root_pointers(struct hprof *h)
{
	size_t n, nf;
	const struct hr_root_pointer *r = hr_dump_root_pointers(h->dump, &n);
	const struct hr_frame *frames = hr_dump_frames(h->dump, &nf);
	const struct hr_goroutine *gs = hr_dump_goroutines(h->dump, &(size_t){ 0 });
	int rc = HR_OK;

	for (size_t i = 0; i < n && !rc; i++) {
		const struct hr_frame *f = r[i].frame < nf ? &frames[r[i].frame] : NULL;
		uint64_t ref = ref_of(h, r[i].ptr);

		if (!f) {
			rc = unknown_root(h, r[i].ptr);
			continue;
		}
		if (!ref)
			continue;
		put_u1(&h->roots, SUB_ROOT_JAVA_FRAME);
		put_id(&h->roots, ref);
		put_u4(&h->roots, f->goroutine + 1); /* its thread, as write_roots() numbers them */
		put_u4(&h->roots, r[i].frame - gs[f->goroutine].first_frame);
		rc = roots_done(h) ? h->err->code : HR_OK;
	}
	return rc;
}

static int write_roots(struct hprof *h)
{
	size_t n;
	const struct hr_goroutine *gs = hr_dump_goroutines(h->dump, &n);
	int rc = write_segment_roots(h, hr_dump_data(h->dump));

	if (!rc)
		rc = write_segment_roots(h, hr_dump_bss(h->dump));
	for (size_t i = 0; i < n && !rc; i++)
		rc = write_goroutine(h, &gs[i], (uint32_t)i + 1);
	if (!rc)
		rc = write_root_pointers(h);
	return rc ? rc : write_other_roots(h);
}

/* --- the file ---------------------------------------------------------------------------------------- */

static int write_header(struct hprof *h)
{
	static const char magic[] = "JAVA PROFILE 1.0.2";
	struct buf b = { 0 };
	int rc = HR_OK;

	put(&b, magic, sizeof(magic)); /* with its NUL */
	put_u4(&b, ID_SIZE);
	put_u4(&b, 0); /* time stamp: unknown */
	put_u4(&b, 0);
	if (b.oom)
		rc = out_of_memory(h);
	else if (fwrite(b.p, 1, b.n, h->out) != b.n)
		rc = hr_error_set(h->err, HR_EIO, "write error");
	free(b.p);
	if (rc)
		return rc;
	h->rec.n = 0; /* the empty stack trace every object is allocated at */
	put_u4(&h->rec, TRACE_SERIAL);
	put_u4(&h->rec, 0);
	put_u4(&h->rec, 0);
	return write_record(h, TAG_STACK_TRACE, &h->rec);
}

int hr_write_hprof(FILE *out, const struct hr_dump *dump, const struct hr_image *img,
		   const struct hr_scan_result *result, struct hr_error *err)
{
	struct hprof h = { .out = out, .dump = dump, .img = img, .bin = img->bin, .result = result,
			   .err = err,
			   .ptr = hr_dump_params(dump)->ptr_size, .next_serial = TRACE_SERIAL };
	int rc = write_header(&h);

	if (!rc)
		rc = base_classes(&h);
	if (!rc)
		rc = write_objects(&h, true);
	if (!rc)
		rc = write_roots(&h);
	if (!rc)
		rc = flush_segment(&h, &h.roots);
	if (!rc)
		rc = flush_segment(&h, &h.cls);
	h.streaming = true;
	if (!rc)
		rc = write_objects(&h, false);
	if (!rc)
		rc = flush_segment(&h, &h.seg);
	if (!rc) {
		h.rec.n = 0;
		rc = write_record(&h, TAG_HEAP_DUMP_END, &h.rec);
	}
	for (size_t i = 0; i < h.nclasses; i++)
		free(h.classes[i].ptr_words);
	free(h.classes);
	free(h.fields);
	free(h.bits);
	free(h.seg.p);
	free(h.roots.p);
	free(h.cls.p);
	free(h.rec.p);
	table_free(&h.strings);
	table_free(&h.class_of);
	return rc;
}
