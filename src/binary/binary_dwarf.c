/* SPDX-License-Identifier: Apache-2.0 */
/*
 * binary_dwarf.c - loads the DWARF of a Go binary into heapref's own tables: types
 * (with members), globals and the functions' PC ranges. Function variables are
 * loaded later, per function, by binary_vars.c through a second libdwarf handle that
 * binary_dwarf_open_vars() opens on the first request and keeps in bin->dw.
 *
 * Two phases, as in dwarves: phase 1 walks the top-level DIEs of every compilation
 * unit once, appending a type per type DIE (ids in DIE order, so the DIE offset of
 * each id is ascending) and keeping every reference as a raw DIE offset; phase 2
 * rewrites those offsets into dense ids by binary search and derives what needs the
 * whole table (typedef sizes, the name and runtime-type indexes). References can
 * point anywhere (types reference each other in cycles), which is why nothing is
 * resolved during the walk.
 *
 * Names: libdwarf's strings live only as long as its handle and its section data;
 * every name kept is copied into bin->strings, so the tables do not depend on
 * libdwarf at all.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binary_dwarf_internal.h"

/*
 * A debug section bigger than this (inflated) is treated as corruption; this also makes
 * every DIE offset fit in the 32 bits the tables keep (see struct hr_binary).
 */
#define MAX_SECTION_BYTES (UINT64_C(4) << 30)

const char *hr_kind_name(unsigned kind)
{
	static const char *const names[HR_KIND_COUNT] = {
		"invalid", "bool", "int", "int8", "int16", "int32", "int64", "uint", "uint8",
		"uint16", "uint32", "uint64", "uintptr", "float32", "float64", "complex64",
		"complex128", "array", "chan", "func", "interface", "map", "ptr", "slice",
		"string", "struct", "unsafe.Pointer",
	};

	return kind < HR_KIND_COUNT ? names[kind] : "invalid";
}

/* ---- errors ------------------------------------------------------------------------------- */

int dw_fail(struct hr_binary *bin, Dwarf_Error derr, uint64_t die_off, const char *what,
	    struct hr_error *err)
{
	char msg[256];

	dwc_errmsg(bin->dw ? bin->dw->dbg : NULL, derr, msg, sizeof(msg));
	return hr_error_set(err, HR_EINPUT, "%s: DWARF DIE at 0x%" PRIx64 ": %s: %s", bin->path,
			    die_off, what, msg);
}

static int nomem(struct hr_binary *bin, struct hr_error *err)
{
	return hr_error_set(err, HR_ENOMEM, "%s: out of memory while reading DWARF", bin->path);
}

/* ---- reading the attributes of one DIE ---------------------------------------------------- */

static bool form_is_address(Dwarf_Half form)
{
	return form == DW_FORM_addr || form == DW_FORM_addrx || form == DW_FORM_addrx1 ||
	       form == DW_FORM_addrx2 || form == DW_FORM_addrx3 || form == DW_FORM_addrx4 ||
	       form == DW_FORM_GNU_addr_index;
}

static int attr_udata(Dwarf_Attribute a, Dwarf_Half form, uint64_t *v, Dwarf_Error *derr)
{
	Dwarf_Unsigned u = 0;
	Dwarf_Addr addr = 0;
	int rc;

	if (form_is_address(form)) {
		rc = dwarf_formaddr(a, &addr, derr);
		*v = addr;
		return rc;
	}
	if (form == DW_FORM_sdata || form == DW_FORM_implicit_const) {
		Dwarf_Signed s = 0;

		rc = dwarf_formsdata(a, &s, derr);
		*v = (uint64_t)s;
		return rc;
	}
	rc = dwarf_formudata(a, &u, derr);
	*v = u;
	return rc;
}

/* Decodes a global's DW_AT_location: a single DW_OP_addr or DW_OP_addrx. */
static int global_location(struct hr_binary *bin, Dwarf_Die die, Dwarf_Attribute a,
			   struct die_info *info, Dwarf_Error *derr)
{
	Dwarf_Unsigned len = 0;
	Dwarf_Ptr block = NULL;
	struct hr_loc_op ops[4];
	size_t n = 0;
	struct hr_error ignored = { 0 };
	Dwarf_Half form = 0;
	int rc;

	rc = dwarf_whatform(a, &form, derr);
	if (rc != DW_DLV_OK)
		return rc;
	if (form == DW_FORM_exprloc) {
		rc = dwarf_formexprloc(a, &len, &block, derr);
		if (rc != DW_DLV_OK)
			return rc;
		rc = hr_loc_decode(block, len, bin->ptr_size, bin->big_endian, ops, 4, &n, &ignored);
	} else if (form == DW_FORM_block1 || form == DW_FORM_block2 || form == DW_FORM_block4 ||
		   form == DW_FORM_block) {
		Dwarf_Block *b = NULL;

		rc = dwarf_formblock(a, &b, derr);
		if (rc != DW_DLV_OK)
			return rc;
		rc = hr_loc_decode(b->bl_data, b->bl_len, bin->ptr_size, bin->big_endian, ops, 4, &n,
				   &ignored);
		dwarf_dealloc(bin->dw->dbg, b, DW_DLA_BLOCK);
	} else {
		return DW_DLV_OK; /* a location list: not a global we can place */
	}
	if (rc || n != 1)
		return DW_DLV_OK;
	if (ops[0].op == DW_OP_addr) {
		info->addr = ops[0].n1;
		info->has_addr = true;
	} else if (ops[0].op == DW_OP_addrx) {
		Dwarf_Addr addr = 0;

		rc = dwarf_debug_addr_index_to_addr(die, ops[0].n1, &addr, derr);
		if (rc != DW_DLV_OK)
			return rc;
		info->addr = addr;
		info->has_addr = true;
	}
	return DW_DLV_OK;
}

static int read_ref(Dwarf_Attribute a, uint64_t *out, bool *has, Dwarf_Error *derr)
{
	Dwarf_Off off = 0;
	int rc = dwarf_global_formref(a, &off, derr);

	if (rc == DW_DLV_OK) {
		*out = off;
		*has = true;
	}
	return rc;
}

static int read_one_attr(struct hr_binary *bin, Dwarf_Die die, Dwarf_Attribute a,
			 struct die_info *info, Dwarf_Error *derr)
{
	Dwarf_Half num = 0, form = 0;
	Dwarf_Bool flag = 0;
	int rc = dwarf_whatattr(a, &num, derr);

	if (rc == DW_DLV_OK)
		rc = dwarf_whatform(a, &form, derr);
	if (rc != DW_DLV_OK)
		return rc;
	switch (num) {
	case DW_AT_name: return dwarf_formstring(a, &info->name, derr);
	case DW_AT_byte_size: info->has_size = true; return attr_udata(a, form, &info->size, derr);
	case DW_AT_type: return read_ref(a, &info->type_off, &info->has_type, derr);
	case DW_AT_go_key: return read_ref(a, &info->key_off, &info->has_key, derr);
	case DW_AT_go_elem: return read_ref(a, &info->elem_off, &info->has_elem, derr);
	case DW_AT_abstract_origin: return read_ref(a, &info->origin_off, &info->has_origin, derr);
	case DW_AT_go_kind: info->has_kind = true; return attr_udata(a, form, &info->kind, derr);
	case DW_AT_go_runtime_type: info->has_rt = true; return attr_udata(a, form, &info->rt, derr);
	case DW_AT_go_closure_offset:
		info->has_closure = true;
		return attr_udata(a, form, &info->closure_off, derr);
	case DW_AT_data_member_location:
		info->has_member_loc = true;
		return attr_udata(a, form, &info->member_loc, derr);
	case DW_AT_count: info->has_count = true; return attr_udata(a, form, &info->count, derr);
	case DW_AT_upper_bound:
		info->has_upper = true;
		return attr_udata(a, form, &info->upper, derr);
	case DW_AT_low_pc: info->has_low = true; return attr_udata(a, form, &info->low_pc, derr);
	case DW_AT_high_pc:
		info->has_high = true;
		info->high_is_offset = !form_is_address(form);
		return attr_udata(a, form, &info->high_pc, derr);
	case DW_AT_ranges: info->has_ranges = true; return DW_DLV_OK;
	case DW_AT_inline: info->is_inline = true; return DW_DLV_OK;
	case DW_AT_go_embedded_field:
		rc = dwarf_formflag(a, &flag, derr);
		info->embedded = flag != 0;
		return rc;
	case DW_AT_location:
		info->has_location = true;
		return info->want_global ? global_location(bin, die, a, info, derr) : DW_DLV_OK;
	default:
		return DW_DLV_OK;
	}
}

int dw_read_die(struct hr_binary *bin, Dwarf_Die die, struct die_info *info,
		struct hr_error *err)
{
	Dwarf_Debug dbg = bin->dw->dbg;
	Dwarf_Attribute *attrs = NULL;
	Dwarf_Signed count = 0;
	Dwarf_Error derr = NULL;
	int rc;

	if (dwarf_tag(die, &info->tag, &derr) != DW_DLV_OK ||
	    dwarf_dieoffset(die, &info->offset, &derr) != DW_DLV_OK)
		return dw_fail(bin, derr, info->offset, "cannot read the tag", err);
	rc = dwarf_attrlist(die, &attrs, &count, &derr);
	if (rc == DW_DLV_ERROR)
		return dw_fail(bin, derr, info->offset, "cannot read the attributes", err);
	if (rc == DW_DLV_NO_ENTRY)
		return HR_OK;
	rc = DW_DLV_OK;
	for (Dwarf_Signed i = 0; i < count; i++) {
		if (rc == DW_DLV_OK)
			rc = read_one_attr(bin, die, attrs[i], info, &derr);
		dwarf_dealloc_attribute(attrs[i]);
	}
	dwarf_dealloc(dbg, attrs, DW_DLA_LIST);
	if (rc == DW_DLV_ERROR)
		return dw_fail(bin, derr, info->offset, "bad attribute", err);
	if (info->has_high && info->high_is_offset && info->has_low)
		info->high_pc += info->low_pc;
	return HR_OK;
}

/* Whether die's abbreviation says it has children (an error counts as yes). */
static bool dw_has_children(Dwarf_Die die)
{
	Dwarf_Half flag = 1;

	return dwarf_die_abbrev_children_flag(die, &flag) != DW_DLV_OK || flag;
}

/* A DW_AT_sibling of die (if it has one) must point past it; else HR_EINPUT. */
static int check_sibling_attr(struct hr_binary *bin, Dwarf_Die die, Dwarf_Off at,
			      struct hr_error *err)
{
	Dwarf_Attribute a = NULL;
	Dwarf_Error derr = NULL;
	Dwarf_Off to = 0;
	int rc = dwarf_attr(die, DW_AT_sibling, &a, &derr);

	if (rc == DW_DLV_NO_ENTRY)
		return HR_OK;
	if (rc == DW_DLV_OK) {
		rc = dwarf_global_formref(a, &to, &derr);
		dwarf_dealloc_attribute(a);
	}
	if (rc != DW_DLV_OK)
		return dw_fail(bin, derr, at, "bad DW_AT_sibling", err);
	if (to <= at)
		return hr_error_set(err, HR_EINPUT, "%s: .debug_info: byte %llu: DW_AT_sibling "
				    "points back, to byte %llu", bin->path, (unsigned long long)at,
				    (unsigned long long)to);
	return HR_OK;
}

/* The DIEs of a subtree being checked, deepest last: each one's children come next. */
struct die_stack {
	Dwarf_Die *dies;
	size_t n, cap;
};

static void die_stack_release(struct die_stack *st)
{
	while (st->n)
		dwarf_dealloc_die(st->dies[--st->n]);
	free(st->dies);
}

/*
 * Checks that every DW_AT_sibling below die points forward, before libdwarf is asked
 * for die's sibling: to find it, libdwarf 20210528 skips die's subtree following the
 * DW_AT_sibling of the DIEs in it, and one that points back loops for ever (found by
 * fuzz_binary). Each DIE of the subtree is checked before its own sibling is asked for,
 * so no skip here meets an unchecked one. Go's compiler writes no DW_AT_sibling; C
 * compilers do.
 */
static int check_subtree(struct hr_binary *bin, Dwarf_Die die, struct hr_error *err)
{
	struct die_stack st = { 0 };
	Dwarf_Error derr = NULL;
	Dwarf_Die d = NULL;
	int dw = dwarf_child(die, &d, &derr); /* libdwarf's DW_DLV_* */
	int rc = dw == DW_DLV_ERROR ? dw_fail(bin, derr, 0, "cannot read a child DIE", err) : 0;

	while (dw == DW_DLV_OK && !rc) {
		Dwarf_Off at = 0;
		Dwarf_Die next = NULL;

		if (dwarf_dieoffset(d, &at, &derr) != DW_DLV_OK) {
			dwarf_dealloc_die(d);
			rc = dw_fail(bin, derr, 0, "cannot read a DIE offset", err);
			break;
		}
		if ((rc = check_sibling_attr(bin, d, at, err))) {
			dwarf_dealloc_die(d);
			break;
		}
		dw = dwarf_child(d, &next, &derr);
		if (dw == DW_DLV_OK) { /* its children first; its sibling once they are checked */
			if (hr_array_reserve((void **)&st.dies, &st.cap, st.n + 1, sizeof(*st.dies))) {
				dwarf_dealloc_die(next);
				dwarf_dealloc_die(d);
				rc = hr_error_set(err, HR_ENOMEM, "out of memory");
				break;
			}
			st.dies[st.n++] = d;
			d = next;
			continue;
		}
		if (dw == DW_DLV_ERROR) {
			dwarf_dealloc_die(d);
			rc = dw_fail(bin, derr, at, "cannot read a child DIE", err);
			break;
		}
		/* d is checked with all below it: its sibling, or the next one up's */
		for (;;) {
			dw = dwc_sibling(bin->dw->dbg, d, &next, &derr);
			dwarf_dealloc_die(d);
			if (dw != DW_DLV_NO_ENTRY || !st.n)
				break;
			d = st.dies[--st.n];
		}
		if (dw == DW_DLV_ERROR)
			rc = dw_fail(bin, derr, at, "cannot read a sibling DIE", err);
		d = next;
	}
	die_stack_release(&st);
	return rc;
}

/* Visits the children of die, calling fn on each; fn's DIE is freed after it returns. */
int dw_children(struct hr_binary *bin, Dwarf_Die die, int (*fn)(void *, Dwarf_Die),
		void *ctx, struct hr_error *err)
{
	Dwarf_Debug dbg = bin->dw->dbg;
	Dwarf_Error derr = NULL;
	Dwarf_Die child = NULL;
	int rc = dwarf_child(die, &child, &derr);

	if (rc == DW_DLV_NO_ENTRY)
		return HR_OK;
	if (rc != DW_DLV_OK)
		return dw_fail(bin, derr, 0, "cannot read a child DIE", err);
	for (;;) {
		Dwarf_Die next = NULL;
		Dwarf_Off at = 0, next_at = 0;

		rc = fn(ctx, child);
		if (rc || dwarf_dieoffset(child, &at, &derr) != DW_DLV_OK) {
			dwarf_dealloc_die(child);
			return rc ? rc : dw_fail(bin, derr, 0, "cannot read a DIE offset", err);
		}
		if ((rc = check_sibling_attr(bin, child, at, err)) ||
		    (dw_has_children(child) && (rc = check_subtree(bin, child, err)))) {
			dwarf_dealloc_die(child);
			return rc;
		}
		rc = dwc_sibling(dbg, child, &next, &derr);
		dwarf_dealloc_die(child);
		if (rc == DW_DLV_NO_ENTRY)
			return HR_OK;
		if (rc != DW_DLV_OK)
			return dw_fail(bin, derr, 0, "cannot read a sibling DIE", err);
		/* a corrupt DW_AT_sibling can point back: the chain would loop for ever */
		if (dwarf_dieoffset(next, &next_at, &derr) != DW_DLV_OK || next_at <= at) {
			dwarf_dealloc_die(next);
			return hr_error_set(err, HR_EINPUT, "%s: .debug_info: byte %llu: the next "
					    "sibling of a DIE is not after it", bin->path,
					    (unsigned long long)at);
		}
		child = next;
	}
}

/* ---- phase 1: the walk -------------------------------------------------------------------- */

/*
 * While walking, every reference is kept as a raw DIE offset in the 32-bit id field
 * it will be resolved into (hr_type.target/elem/key, hr_member.type, hr_global.type):
 * offsets fit (see struct hr_binary), 0 means none (no DIE sits at offset 0), and no
 * side arrays are needed. Phase 2 rewrites them in place.
 */
struct func_tmp {
	uint64_t low_pc, high_pc;  /* ELF addresses */
	const char *name;          /* in bin->strings; "" until named from its origin */
	uint32_t offset;           /* DIE offset */
	uint32_t origin;           /* DW_AT_abstract_origin of an unnamed one, else 0 */
};

/* A direct-mapped cache of names already in bin->strings, to store repeated ones once. */
#define NAME_CACHE_SLOTS 8192

struct load {
	struct hr_binary *bin;
	struct hr_error *err;
	VEC(struct func_tmp, funcs);
	const char **name_cache;           /* NAME_CACHE_SLOTS entries, or NULL */
	uint32_t cur_struct;               /* while reading members */
};

/* A DIE offset as kept in the tables: 0 (none) if it cannot be one. */
static uint32_t off32(uint64_t off)
{
	return off <= UINT32_MAX ? (uint32_t)off : 0;
}

static const char *copy_name(struct load *ld, const char *name)
{
	return strtab_add(&ld->bin->strings, name ? name : "", name ? strlen(name) : 0);
}

/*
 * copy_name() for names that repeat: member names ("data", "len", "tab") and type
 * names (Go names a struct and its typedef alike). A name equal to the one in its
 * cache slot is shared rather than copied again.
 */
static const char *shared_name(struct load *ld, const char *name)
{
	const char **slot;
	const char *copy;
	size_t len;
	uint32_t h = 2166136261u;

	if (!name || !ld->name_cache)
		return copy_name(ld, name);
	for (len = 0; name[len]; len++)
		h = (h ^ (unsigned char)name[len]) * 16777619u;
	slot = &ld->name_cache[h % NAME_CACHE_SLOTS];
	if (*slot && !strcmp(*slot, name))
		return *slot;
	copy = strtab_add(&ld->bin->strings, name, len);
	if (copy)
		*slot = copy;
	return copy;
}

static uint8_t shape_of(Dwarf_Half tag)
{
	switch (tag) {
	case DW_TAG_base_type: return HR_SHAPE_BASE;
	case DW_TAG_pointer_type: return HR_SHAPE_POINTER;
	case DW_TAG_structure_type: return HR_SHAPE_STRUCT;
	case DW_TAG_array_type: return HR_SHAPE_ARRAY;
	case DW_TAG_typedef: return HR_SHAPE_TYPEDEF;
	case DW_TAG_subroutine_type: return HR_SHAPE_FUNC;
	default: return HR_SHAPE_OTHER;
	}
}

static bool is_type_tag(Dwarf_Half tag)
{
	return tag == DW_TAG_base_type || tag == DW_TAG_pointer_type ||
	       tag == DW_TAG_structure_type || tag == DW_TAG_array_type ||
	       tag == DW_TAG_typedef || tag == DW_TAG_subroutine_type ||
	       tag == DW_TAG_unspecified_type;
}

static uint8_t kind_from_shape(uint8_t shape)
{
	switch (shape) {
	case HR_SHAPE_POINTER: return HR_KIND_PTR;
	case HR_SHAPE_STRUCT: return HR_KIND_STRUCT;
	case HR_SHAPE_ARRAY: return HR_KIND_ARRAY;
	case HR_SHAPE_FUNC: return HR_KIND_FUNC;
	default: return HR_KIND_INVALID;
	}
}

static int member_cb(void *ctx, Dwarf_Die die)
{
	struct load *ld = ctx;
	struct die_info info = { 0 };
	struct hr_member *m;
	int rc = dw_read_die(ld->bin, die, &info, ld->err);

	if (rc)
		return rc;
	if (info.tag != DW_TAG_member)
		return HR_OK;
	m = VEC_PUSH(ld->bin, members);
	if (!m || !(m->name = shared_name(ld, info.name)))
		return nomem(ld->bin, ld->err);
	m->offset = info.member_loc;
	m->embedded = info.embedded;
	m->type = info.has_type ? off32(info.type_off) : 0; /* raw until phase 2 */
	ld->bin->types[ld->cur_struct].member_count++;
	return HR_OK;
}

static int subrange_cb(void *ctx, Dwarf_Die die)
{
	struct load *ld = ctx;
	struct die_info info = { 0 };
	struct hr_type *t = &ld->bin->types[ld->cur_struct];
	int rc = dw_read_die(ld->bin, die, &info, ld->err);

	if (rc || info.tag != DW_TAG_subrange_type)
		return rc;
	if (info.has_count) {
		t->count = info.count;
		t->flags |= HR_TYPE_HAS_COUNT;
	} else if (info.has_upper && info.upper != UINT64_MAX) {
		t->count = info.upper + 1;
		t->flags |= HR_TYPE_HAS_COUNT;
	}
	return HR_OK;
}

static int add_type(struct load *ld, Dwarf_Die die, const struct die_info *info)
{
	struct hr_binary *bin = ld->bin;
	struct hr_type *t = VEC_PUSH(bin, types);
	uint32_t *off = VEC_PUSH(bin, type_offsets);

	if (!t || !off || !(t->name = shared_name(ld, info->name)))
		return nomem(bin, ld->err);
	*off = off32(info->offset);
	t->shape = shape_of(info->tag);
	t->kind = info->has_kind && info->kind > 0 && info->kind < HR_KIND_COUNT
			  ? (uint8_t)info->kind
			  : kind_from_shape(t->shape);
	t->size = info->has_size ? info->size : t->shape == HR_SHAPE_POINTER ? bin->ptr_size : 0;
	if (info->has_rt && info->rt != 0) { /* Go writes 0 for types without one */
		t->runtime_type = info->rt;
		t->flags |= HR_TYPE_HAS_RUNTIME_TYPE;
	}
	/* raw DIE offsets until phase 2 */
	t->target = info->has_type ? off32(info->type_off) : 0;
	t->key = info->has_key ? off32(info->key_off) : 0;
	t->elem = info->has_elem ? off32(info->elem_off) : 0;
	ld->cur_struct = (uint32_t)(bin->types_n - 1);
	if (t->shape == HR_SHAPE_STRUCT) {
		t->first_member = (uint32_t)bin->members_n;
		return dw_children(bin, die, member_cb, ld, ld->err);
	}
	if (t->shape == HR_SHAPE_ARRAY)
		return dw_children(bin, die, subrange_cb, ld, ld->err);
	return HR_OK;
}

static int add_global(struct load *ld, const struct die_info *info)
{
	struct hr_global *g;

	if (!info->has_addr || !info->name)
		return HR_OK;
	g = VEC_PUSH(ld->bin, globals);
	if (!g || !(g->name = copy_name(ld, info->name)))
		return nomem(ld->bin, ld->err);
	g->addr = info->addr;
	g->type = info->has_type ? off32(info->type_off) : 0; /* raw until phase 2 */
	return HR_OK;
}

/*
 * A concrete subprogram (one with a PC range) becomes a function. An unnamed one is
 * the out-of-line copy of an inlinable function: its name is read from its abstract
 * origin after the walk (name_from_origins()), so the names of the many abstract
 * subprograms that have no out-of-line copy are never stored.
 */
static int add_func(struct load *ld, const struct die_info *info)
{
	struct func_tmp *f;

	if (!info->has_low || !info->has_high || info->high_pc <= info->low_pc)
		return HR_OK;
	f = VEC_PUSH(ld, funcs);
	if (!f || !(f->name = copy_name(ld, info->name)))
		return nomem(ld->bin, ld->err);
	f->low_pc = info->low_pc;
	f->high_pc = info->high_pc;
	f->offset = off32(info->offset);
	f->origin = info->has_origin && !info->name ? off32(info->origin_off) : 0;
	return HR_OK;
}

static int top_cb(void *ctx, Dwarf_Die die)
{
	struct load *ld = ctx;
	struct die_info info = { 0 };
	Dwarf_Half tag = 0;
	Dwarf_Error derr = NULL;
	int rc;

	if (dwarf_tag(die, &tag, &derr) != DW_DLV_OK)
		return dw_fail(ld->bin, derr, 0, "cannot read a tag", ld->err);
	if (!is_type_tag(tag) && tag != DW_TAG_variable && tag != DW_TAG_subprogram)
		return HR_OK;
	info.want_global = tag == DW_TAG_variable;
	rc = dw_read_die(ld->bin, die, &info, ld->err);
	if (rc)
		return rc;
	if (is_type_tag(tag))
		return add_type(ld, die, &info);
	if (tag == DW_TAG_variable)
		return add_global(ld, &info);
	return add_func(ld, &info);
}

static int walk_units(struct load *ld)
{
	struct hr_binary *bin = ld->bin;
	Dwarf_Error derr = NULL;

	for (;;) {
		Dwarf_Die cu = NULL;
		Dwarf_Half version = 0, offset_size = 0;
		int rc = dwc_next_cu(bin->dw->dbg, &cu, &version, &offset_size, &derr);

		if (rc == DW_DLV_NO_ENTRY)
			return HR_OK;
		if (rc != DW_DLV_OK)
			return dw_fail(bin, derr, 0, "cannot read a compilation unit header", ld->err);
		if (version > bin->dwarf_version)
			bin->dwarf_version = version;
		rc = dw_children(bin, cu, top_cb, ld, ld->err);
		dwarf_dealloc_die(cu);
		if (rc)
			return rc;
	}
}

/*
 * Names the unnamed functions after their DW_AT_abstract_origin. (No sorting by
 * origin to share reads: they are few, and a sort's buffer would be allocated while
 * the inflated .debug_info is still held.) An origin that cannot be read leaves the
 * function unnamed.
 */
static int name_from_origins(struct load *ld)
{
	struct hr_binary *bin = ld->bin;

	for (size_t i = 0; i < ld->funcs_n; i++) {
		struct func_tmp *f = &ld->funcs[i];
		struct die_info info = { 0 };
		Dwarf_Error derr = NULL;
		Dwarf_Die die = NULL;
		char ignored[64];
		int rc;

		if (!f->origin || f->name[0])
			continue;
		rc = dwarf_offdie_b(bin->dw->dbg, f->origin, 1, &die, &derr);
		if (rc == DW_DLV_ERROR)
			dwc_errmsg(bin->dw->dbg, derr, ignored, sizeof(ignored)); /* frees derr */
		if (rc != DW_DLV_OK)
			continue;
		rc = dw_read_die(bin, die, &info, ld->err);
		if (!rc && info.name && info.tag == DW_TAG_subprogram &&
		    !(f->name = copy_name(ld, info.name)))
			rc = nomem(bin, ld->err);
		dwarf_dealloc_die(die);
		if (rc)
			return rc;
	}
	return HR_OK;
}

/* ---- phase 2: offsets to ids -------------------------------------------------------------- */

uint32_t binary_type_id(const struct hr_binary *bin, uint64_t off)
{
	size_t lo = 1, hi = bin->types_n;

	if (off == 0 || off > UINT32_MAX)
		return 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (bin->type_offsets[mid] < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < bin->types_n && bin->type_offsets[lo] == off ? (uint32_t)lo : 0;
}

static void resolve_types(struct load *ld)
{
	struct hr_binary *bin = ld->bin;

	for (size_t id = 1; id < bin->types_n; id++) {
		struct hr_type *t = &bin->types[id];
		uint32_t target = binary_type_id(bin, t->target);
		uint32_t elem = binary_type_id(bin, t->elem);
		bool has_elem = t->elem != 0;

		/* arrays: DW_AT_type is the element; others: DW_AT_go_elem is */
		t->target = t->shape == HR_SHAPE_ARRAY ? 0 : target;
		t->elem = t->shape == HR_SHAPE_ARRAY ? target : 0;
		if (has_elem)
			t->elem = elem;
		t->key = binary_type_id(bin, t->key);
	}
	for (size_t i = 0; i < bin->members_n; i++)
		bin->members[i].type = binary_type_id(bin, bin->members[i].type);
	for (size_t i = 0; i < bin->globals_n; i++)
		bin->globals[i].type = binary_type_id(bin, bin->globals[i].type);
	binary_derive_typedefs(bin);
}

static int cmp_func(const void *a, const void *b)
{
	const struct func_tmp *x = a, *y = b;

	if (x->low_pc != y->low_pc)
		return x->low_pc < y->low_pc ? -1 : 1;
	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static int finish_funcs(struct load *ld)
{
	struct hr_binary *bin = ld->bin;
	size_t n = ld->funcs_n;

	hr_sort(ld->funcs, n, sizeof(*ld->funcs), cmp_func);
	bin->funcs = calloc(n ? n : 1, sizeof(*bin->funcs));
	bin->func_offsets = calloc(n ? n : 1, sizeof(*bin->func_offsets));
	if (!bin->funcs || !bin->func_offsets)
		return nomem(bin, ld->err);
	bin->funcs_n = bin->funcs_cap = n;
	for (size_t i = 0; i < n; i++) {
		const struct func_tmp *f = &ld->funcs[i];

		bin->funcs[i].name = f->name;
		bin->funcs[i].low_pc = f->low_pc;
		bin->funcs[i].high_pc = f->high_pc;
		bin->func_offsets[i] = f->offset;
	}
	free(ld->funcs);
	ld->funcs = NULL;
	ld->funcs_n = ld->funcs_cap = 0;
	return HR_OK;
}

/* ---- entry points --------------------------------------------------------------------------- */

/* Id 0 is the void type: unnamed, no size. */
static int add_void(struct load *ld)
{
	struct hr_type *t = VEC_PUSH(ld->bin, types);
	uint32_t *off = VEC_PUSH(ld->bin, type_offsets);

	if (!t || !off || !(t->name = copy_name(ld, "")))
		return nomem(ld->bin, ld->err);
	return HR_OK;
}

static int open_view(struct hr_binary *bin, enum dwc_view view, struct hr_error *err)
{
	int rc;

	bin->dw = calloc(1, sizeof(*bin->dw));
	if (!bin->dw)
		return nomem(bin, err);
	rc = dwc_open(bin->fd, bin->path, MAX_SECTION_BYTES, view, &bin->dw->dbg, &bin->dw->obj,
		      err);
	if (rc == 0)
		return HR_OK;
	free(bin->dw);
	bin->dw = NULL;
	return rc; /* 1: no DWARF */
}

static void close_view(struct hr_binary *bin)
{
	if (bin->dw) {
		dwc_close(bin->dw->dbg, bin->dw->obj);
		free(bin->dw);
		bin->dw = NULL;
	}
}

/*
 * Phase 1 runs on a libdwarf handle that sees no location or range lists and is
 * closed (with every section it inflated) before phase 2, so the inflated .debug_info
 * and libdwarf's own memory are never held together with phase 2's sorting and
 * indexes, nor after hr_binary_open() returns.
 */
int binary_dwarf_load(struct hr_binary *bin, struct hr_error *err)
{
	struct load ld = { .bin = bin, .err = err };
	int rc = open_view(bin, DWC_VIEW_TYPES, err);

	if (rc < 0)
		return rc;
	if (rc == 1)
		return add_void(&ld); /* no DWARF: only the void type */
	bin->has_dwarf = true;
	bin->debug_info_size = dwc_section_size(bin->dw->obj, ".debug_info");
	ld.name_cache = calloc(NAME_CACHE_SLOTS, sizeof(*ld.name_cache)); /* optional */
	rc = add_void(&ld);
	if (!rc)
		rc = walk_units(&ld);
	if (!rc)
		rc = name_from_origins(&ld);
	close_view(bin);
	free(ld.name_cache);
	if (!rc) {
		VEC_SHRINK(bin, types);
		VEC_SHRINK(bin, type_offsets);
		VEC_SHRINK(bin, members);
		VEC_SHRINK(bin, globals);
		resolve_types(&ld);
		rc = finish_funcs(&ld);
	}
	if (!rc)
		rc = binary_build_indexes(bin, err);
	free(ld.funcs);
	return rc;
}

int binary_dwarf_open_vars(struct hr_binary *bin, struct hr_error *err)
{
	int rc;

	if (bin->dw)
		return HR_OK;
	if (!bin->has_dwarf)
		return hr_error_set(err, HR_EINPUT, "%s: no DWARF", bin->path);
	rc = open_view(bin, DWC_VIEW_VARS, err);
	if (rc == 1)
		return hr_error_set(err, HR_EINPUT, "%s: the DWARF has gone from the file",
				    bin->path);
	return rc;
}

void binary_dwarf_close(struct hr_binary *bin)
{
	close_view(bin);
	free(bin->types);
	free(bin->type_offsets);
	free(bin->members);
	free(bin->types_by_name);
	free(bin->rt_index);
	free(bin->globals);
	free(bin->funcs);
	free(bin->func_offsets);
}
