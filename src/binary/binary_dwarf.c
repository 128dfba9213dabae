/*
 * binary_dwarf.c - loads the DWARF of a Go binary into heapref's own tables: types
 * (with members), globals and the functions' PC ranges. Function variables are
 * loaded later, per function, by binary_vars.c through the libdwarf handle kept in
 * bin->dw.
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

/* Inflating a debug section beyond this is treated as corruption. */
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

		rc = fn(ctx, child);
		if (rc) {
			dwarf_dealloc_die(child);
			return rc;
		}
		rc = dwc_sibling(dbg, child, &next, &derr);
		dwarf_dealloc_die(child);
		if (rc == DW_DLV_NO_ENTRY)
			return HR_OK;
		if (rc != DW_DLV_OK)
			return dw_fail(bin, derr, 0, "cannot read a sibling DIE", err);
		child = next;
	}
}

/* ---- phase 1: the walk -------------------------------------------------------------------- */

struct type_refs {
	uint64_t target;   /* DW_AT_type */
	uint64_t key;      /* DW_AT_go_key */
	uint64_t elem;     /* DW_AT_go_elem */
};

struct func_tmp {
	struct hr_func f;
	uint64_t offset;   /* DIE offset */
	uint64_t origin;   /* DW_AT_abstract_origin, 0 if none */
};

struct origin {
	uint64_t offset;
	const char *name;  /* in bin->strings */
};

struct load {
	struct hr_binary *bin;
	struct hr_error *err;
	VEC(struct type_refs, refs);       /* per type id */
	VEC(uint64_t, member_refs);        /* per member */
	VEC(uint64_t, global_refs);        /* per global */
	VEC(struct func_tmp, funcs);
	VEC(struct origin, origins);       /* abstract subprograms, by DIE offset */
	uint32_t cur_struct;               /* while reading members */
};

static const char *copy_name(struct load *ld, const char *name)
{
	return strtab_add(&ld->bin->strings, name ? name : "", name ? strlen(name) : 0);
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
	uint64_t *ref;
	int rc = dw_read_die(ld->bin, die, &info, ld->err);

	if (rc)
		return rc;
	if (info.tag != DW_TAG_member)
		return HR_OK;
	m = VEC_PUSH(ld->bin, members);
	ref = VEC_PUSH(ld, member_refs);
	if (!m || !ref || !(m->name = copy_name(ld, info.name)))
		return nomem(ld->bin, ld->err);
	m->offset = info.member_loc;
	m->embedded = info.embedded;
	*ref = info.has_type ? info.type_off : 0;
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
	uint64_t *off = VEC_PUSH(bin, type_offsets);
	struct type_refs *r = VEC_PUSH(ld, refs);

	if (!t || !off || !r || !(t->name = copy_name(ld, info->name)))
		return nomem(bin, ld->err);
	*off = info->offset;
	t->shape = shape_of(info->tag);
	t->kind = info->has_kind && info->kind > 0 && info->kind < HR_KIND_COUNT
			  ? (uint8_t)info->kind
			  : kind_from_shape(t->shape);
	t->size = info->has_size ? info->size : t->shape == HR_SHAPE_POINTER ? bin->ptr_size : 0;
	if (info->has_rt && info->rt != 0) { /* Go writes 0 for types without one */
		t->runtime_type = info->rt;
		t->flags |= HR_TYPE_HAS_RUNTIME_TYPE;
	}
	r->target = info->has_type ? info->type_off : 0;
	r->key = info->has_key ? info->key_off : 0;
	r->elem = info->has_elem ? info->elem_off : 0;
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
	uint64_t *ref;

	if (!info->has_addr || !info->name)
		return HR_OK;
	g = VEC_PUSH(ld->bin, globals);
	ref = VEC_PUSH(ld, global_refs);
	if (!g || !ref || !(g->name = copy_name(ld, info->name)))
		return nomem(ld->bin, ld->err);
	g->addr = info->addr;
	*ref = info->has_type ? info->type_off : 0;
	return HR_OK;
}

static int add_func(struct load *ld, const struct die_info *info)
{
	if (info->has_low && info->has_high && info->high_pc > info->low_pc) {
		struct func_tmp *f = VEC_PUSH(ld, funcs);

		if (!f || !(f->f.name = copy_name(ld, info->name)))
			return nomem(ld->bin, ld->err);
		f->f.low_pc = info->low_pc;
		f->f.high_pc = info->high_pc;
		f->offset = info->offset;
		f->origin = info->has_origin && !info->name ? info->origin_off : 0;
	} else if (info->name) {
		struct origin *o = VEC_PUSH(ld, origins);

		if (!o || !(o->name = copy_name(ld, info->name)))
			return nomem(ld->bin, ld->err);
		o->offset = info->offset;
	}
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

/* ---- phase 2: offsets to ids -------------------------------------------------------------- */

uint32_t binary_type_id(const struct hr_binary *bin, uint64_t off)
{
	size_t lo = 1, hi = bin->types_n;

	if (off == 0)
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
		uint32_t target = binary_type_id(bin, ld->refs[id].target);

		if (t->shape == HR_SHAPE_ARRAY)
			t->elem = target;
		else
			t->target = target;
		if (ld->refs[id].elem)
			t->elem = binary_type_id(bin, ld->refs[id].elem);
		t->key = binary_type_id(bin, ld->refs[id].key);
	}
	for (size_t i = 0; i < bin->members_n; i++)
		bin->members[i].type = binary_type_id(bin, ld->member_refs[i]);
	for (size_t i = 0; i < bin->globals_n; i++)
		bin->globals[i].type = binary_type_id(bin, ld->global_refs[i]);
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

static int cmp_origin(const void *a, const void *b)
{
	const struct origin *x = a, *y = b;

	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static int cmp_func(const void *a, const void *b)
{
	const struct func_tmp *x = a, *y = b;

	if (x->f.low_pc != y->f.low_pc)
		return x->f.low_pc < y->f.low_pc ? -1 : 1;
	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static int cmp_global(const void *a, const void *b)
{
	const struct hr_global *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static const char *origin_name(struct load *ld, uint64_t off)
{
	struct origin key = { off, NULL };
	struct origin *o = NULL;

	if (ld->origins_n)
		o = bsearch(&key, ld->origins, ld->origins_n, sizeof(key), cmp_origin);
	return o ? o->name : NULL;
}

static int finish_funcs(struct load *ld)
{
	struct hr_binary *bin = ld->bin;
	size_t n = ld->funcs_n;

	hr_sort(ld->origins, ld->origins_n, sizeof(*ld->origins), cmp_origin);
	hr_sort(ld->funcs, n, sizeof(*ld->funcs), cmp_func);
	bin->funcs = calloc(n ? n : 1, sizeof(*bin->funcs));
	bin->func_offsets = calloc(n ? n : 1, sizeof(*bin->func_offsets));
	bin->func_vars = calloc(n ? n : 1, sizeof(*bin->func_vars));
	if (!bin->funcs || !bin->func_offsets || !bin->func_vars)
		return nomem(bin, ld->err);
	bin->funcs_n = bin->funcs_cap = bin->func_offsets_n = bin->func_offsets_cap = n;
	for (size_t i = 0; i < n; i++) {
		struct func_tmp *f = &ld->funcs[i];

		if (f->origin && !f->f.name[0]) {
			const char *name = origin_name(ld, f->origin);

			if (name)
				f->f.name = name;
		}
		bin->funcs[i] = f->f;
		bin->func_offsets[i] = f->offset;
	}
	return HR_OK;
}

static int cmp_rt(const void *a, const void *b)
{
	const struct rt_entry *x = a, *y = b;

	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int build_indexes(struct load *ld)
{
	struct hr_binary *bin = ld->bin;

	hr_sort(bin->globals, bin->globals_n, sizeof(*bin->globals), cmp_global);
	for (size_t id = 1; id < bin->types_n; id++) {
		const struct hr_type *t = &bin->types[id];
		struct rt_entry *e;

		if (!(t->flags & HR_TYPE_HAS_RUNTIME_TYPE))
			continue;
		e = VEC_PUSH(bin, rt_index);
		if (!e)
			return nomem(bin, ld->err);
		e->offset = t->runtime_type;
		e->id = (uint32_t)id;
	}
	hr_sort(bin->rt_index, bin->rt_index_n, sizeof(*bin->rt_index), cmp_rt);
	return binary_build_name_index(bin, ld->err);
}

/* ---- entry points --------------------------------------------------------------------------- */

static void load_release(struct load *ld)
{
	free(ld->refs);
	free(ld->member_refs);
	free(ld->global_refs);
	free(ld->funcs);
	free(ld->origins);
}

/* Id 0 is the void type: unnamed, no size. */
static int add_void(struct load *ld)
{
	struct hr_type *t = VEC_PUSH(ld->bin, types);
	uint64_t *off = VEC_PUSH(ld->bin, type_offsets);
	struct type_refs *r = VEC_PUSH(ld, refs);

	if (!t || !off || !r || !(t->name = copy_name(ld, "")))
		return nomem(ld->bin, ld->err);
	return HR_OK;
}

int binary_dwarf_load(struct hr_binary *bin, struct hr_error *err)
{
	struct load ld = { .bin = bin, .err = err };
	int rc;

	bin->dw = calloc(1, sizeof(*bin->dw));
	if (!bin->dw)
		return nomem(bin, err);
	rc = dwc_open(bin->elf, bin->path, MAX_SECTION_BYTES, &bin->dw->dbg, &bin->dw->obj, err);
	if (rc < 0)
		return rc;
	rc = add_void(&ld);
	if (!rc && bin->dw->dbg)
		rc = walk_units(&ld);
	if (!rc) {
		resolve_types(&ld);
		rc = finish_funcs(&ld);
	}
	if (!rc)
		rc = build_indexes(&ld);
	load_release(&ld);
	return rc;
}

void binary_dwarf_close(struct hr_binary *bin)
{
	if (bin->dw) {
		dwc_close(bin->dw->dbg, bin->dw->obj);
		free(bin->dw);
	}
	free(bin->types);
	free(bin->type_offsets);
	free(bin->members);
	free(bin->types_by_name);
	free(bin->rt_index);
	free(bin->globals);
	free(bin->funcs);
	free(bin->func_offsets);
}
