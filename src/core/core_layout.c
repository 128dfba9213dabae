/* SPDX-License-Identifier: Apache-2.0 */
/*
 * core_layout.c - where the runtime keeps what the core reader needs: the offsets and
 * sizes of the fields of its structures (runtime.mspan, runtime.g, ...) and the
 * addresses of its globals (runtime.mheap_, runtime.allgs, ...), all from the binary's
 * DWARF rather than tables per Go release: a field that moved between releases is found
 * where this binary has it. Fields renamed between releases are listed with each name
 * ("Size_|size"); a structure renamed likewise ("internal/abi.Type|runtime._type").
 *
 * A runtime without a field marked required is one the reader does not know: it is
 * refused, naming the Go version and the field.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "core_internal.h"

struct field_spec {
	const char *types; /* "|"-separated alternatives */
	const char *path;  /* "sched.sp"; each step may be "a|b" */
	size_t field;      /* offsetof(struct rt_layout, ...) */
	bool required;
};

#define RT_TYPE "internal/abi.Type|runtime._type"
#define F(types, path, member, req) { types, path, offsetof(struct rt_layout, member), req }

static const struct field_spec fields[] = {
	F("runtime.mheap", "allspans", h_allspans, true),
	F("runtime.mheap", "arenas", h_arenas, false),
	F("runtime.mspan", "startAddr", s_start, true),
	F("runtime.mspan", "npages", s_npages, true),
	F("runtime.mspan", "freeindex", s_freeindex, true),
	F("runtime.mspan", "nelems", s_nelems, true),
	F("runtime.mspan", "freeIndexForScan", s_free_scan, false),
	F("runtime.mspan", "allocBits", s_alloc_bits, true),
	F("runtime.mspan", "spanclass", s_spanclass, true),
	F("runtime.mspan", "state", s_state, true),
	F("runtime.mspan", "elemsize", s_elemsize, true),
	F("runtime.mspan", "specials", s_specials, true),
	F("runtime.mspan", "largeType", s_large_type, false),
	F("runtime.heapArena", "bitmap", a_bitmap, false),
	F("runtime.heapArena", "noMorePtrs", a_no_more_ptrs, false),
	F(RT_TYPE, "Size_|size", t_size, true),
	F(RT_TYPE, "PtrBytes|ptrdata", t_ptrbytes, true),
	F(RT_TYPE, "TFlag|tflag", t_tflag, true),
	F(RT_TYPE, "GCData|gcdata", t_gcdata, true),
	F("runtime.g", "stack.lo", g_stack_lo, true),
	F("runtime.g", "stack.hi", g_stack_hi, true),
	F("runtime.g", "sched.sp", g_sched_sp, true),
	F("runtime.g", "sched.pc", g_sched_pc, true),
	F("runtime.g", "sched.lr", g_sched_lr, true),
	F("runtime.g", "sched.ctxt", g_sched_ctxt, true),
	F("runtime.g", "syscallsp", g_syscallsp, true),
	F("runtime.g", "syscallpc", g_syscallpc, true),
	F("runtime.g", "atomicstatus", g_status, true),
	F("runtime.g", "goid", g_goid, true),
	F("runtime.g", "gopc", g_gopc, true),
	F("runtime.g", "startpc", g_startpc, true),
	F("runtime.g", "waitsince", g_waitsince, true),
	F("runtime.g", "waitreason", g_waitreason, true),
	F("runtime.g", "m", g_m, true),
	F("runtime.g", "_defer", g_defer, true),
	F("runtime.g", "_panic", g_panic, true),
	F("runtime.m", "id", m_id, true),
	F("runtime.m", "procid", m_procid, true),
	F("runtime.m", "alllink", m_alllink, true),
	F("runtime.m", "curg", m_curg, true),
	F("runtime.moduledata", "data", md_data, true),
	F("runtime.moduledata", "edata", md_edata, true),
	F("runtime.moduledata", "bss", md_bss, true),
	F("runtime.moduledata", "ebss", md_ebss, true),
	F("runtime.moduledata", "gcdatamask", md_gcdatamask, true),
	F("runtime.moduledata", "gcbssmask", md_gcbssmask, true),
	F("runtime.bitvector", "n", bv_n, true),
	F("runtime.bitvector", "bytedata", bv_bytedata, true),
	F("runtime.special", "next", sp_next, true),
	F("runtime.special", "offset", sp_offset, true),
	F("runtime.special", "kind", sp_kind, true),
	F("runtime.specialfinalizer", "fn", spf_fn, true),
	F("runtime.specialfinalizer", "fint", spf_fint, true),
	F("runtime.specialfinalizer", "ot", spf_ot, true),
	F("runtime.finBlock|runtime.finblock", "alllink", fb_alllink, true),
	F("runtime.finBlock|runtime.finblock", "cnt", fb_cnt, true),
	F("runtime.finBlock|runtime.finblock", "fin", fb_fin, true),
	F("runtime.finalizer", "fn", fin_fn, true),
	F("runtime.finalizer", "arg", fin_arg, true),
	F("runtime.finalizer", "fint", fin_fint, true),
	F("runtime.finalizer", "ot", fin_ot, true),
	F("runtime.itabTableType", "size", it_size, true),
	F("runtime.itabTableType", "entries", it_entries, true),
	F("internal/abi.ITab|runtime.itab", "Type|_type", itab_type, true),
	F("runtime.funcval", "fn", funcval_fn, true),
	F("runtime.bucket", "allnext", bk_allnext, false),
	F("runtime.bucket", "size", bk_size, false),
	F("runtime.bucket", "nstk", bk_nstk, false),
	F("runtime.memRecord", "active.allocs", mr_allocs, false),
	F("runtime.memRecord", "active.frees", mr_frees, false),
	F("runtime.specialprofile", "b", spp_b, false),
};

/* Copies the n-th "|"-separated alternative of list into buf; false past the last. */
static bool alternative(const char *list, unsigned n, char *buf, size_t len)
{
	const char *p = list;

	for (; n; n--) {
		p = strchr(p, '|');
		if (!p)
			return false;
		p++;
	}
	size_t k = strcspn(p, "|");

	snprintf(buf, len, "%.*s", (int)k, p);
	return true;
}

/* The member of struct type id named by one step ("a|b"), or NULL. */
static const struct hr_member *find_step(const struct hr_binary *bin, uint32_t id, const char *step,
					 size_t step_len)
{
	char names[128], name[64];

	snprintf(names, sizeof(names), "%.*s", (int)step_len, step);
	for (unsigned i = 0; alternative(names, i, name, sizeof(name)); i++) {
		const struct hr_member *m = hr_binary_find_member(bin, id, name);

		if (m)
			return m;
	}
	return NULL;
}

/* Resolves path inside struct type id. */
static bool resolve_path(const struct hr_binary *bin, uint32_t id, const char *path,
			 struct rt_field *out)
{
	uint64_t off = 0;
	uint32_t type = id;

	for (const char *step = path; *step;) {
		size_t len = strcspn(step, ".");
		const struct hr_member *m = find_step(bin, hr_binary_resolve_typedef(bin, type), step,
						      len);

		if (!m)
			return false;
		off += m->offset;
		type = m->type;
		step += len + (step[len] == '.');
	}
	*out = (struct rt_field){ off, (uint32_t)hr_binary_type(bin, hr_binary_resolve_typedef(bin, type))->size,
				  true };
	return true;
}

static uint32_t find_struct(const struct hr_binary *bin, const char *types)
{
	char name[96];

	for (unsigned i = 0; alternative(types, i, name, sizeof(name)); i++) {
		uint32_t id = hr_binary_find_type(bin, name);

		if (id)
			return id;
	}
	return 0;
}

/* The size of the first of types the binary has, 0 if none. */
static uint64_t struct_size(const struct hr_binary *bin, const char *types)
{
	return hr_binary_type(bin, find_struct(bin, types))->size;
}

static int unknown_runtime(const struct hr_binary *bin, const char *core_path, const char *what,
			   struct hr_error *err)
{
	const char *v = hr_binary_go_version(bin);

	return hr_error_set(err, HR_EINPUT, "%s: cannot read the runtime of %s (%s): its DWARF has "
			    "no %s; heapref reads cores of Go 1.19 to 1.27", core_path,
			    hr_binary_path(bin), v[0] ? v : "unknown Go version", what);
}

static int load_fields(struct rt_layout *L, const struct hr_binary *bin, const char *core_path,
		       struct hr_error *err)
{
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		const struct field_spec *f = &fields[i];
		struct rt_field *out = (struct rt_field *)((char *)L + f->field);
		uint32_t id = find_struct(bin, f->types);
		char what[160];

		if (id && resolve_path(bin, id, f->path, out))
			continue;
		if (!f->required)
			continue;
		snprintf(what, sizeof(what), "%s in %s", f->path, f->types);
		return unknown_runtime(bin, core_path, what, err);
	}
	return HR_OK;
}

/* The run-time address of global name, where exe loaded it. */
static bool global_addr(const struct hr_image *exe, const char *name, uint64_t *addr)
{
	const struct hr_global *g = hr_binary_find_global(exe->bin, name);

	if (!g)
		return false;
	*addr = hr_image_runtime(exe, g->addr);
	return true;
}

static int load_globals(struct rt_layout *L, const struct hr_image *exe, const char *core_path,
			struct hr_error *err)
{
	const struct hr_binary *bin = exe->bin;
	static const struct {
		const char *name;
		size_t field;
		bool required; /* else left 0: what it gives is only shown */
	} globals[] = {
		{ "runtime.mheap_", offsetof(struct rt_layout, mheap), true },
		{ "runtime.allgs", offsetof(struct rt_layout, allgs), true },
		{ "runtime.firstmoduledata", offsetof(struct rt_layout, firstmoduledata), true },
		{ "runtime.allfin", offsetof(struct rt_layout, allfin), true },
		{ "runtime.itabTable", offsetof(struct rt_layout, itab_table), false },
		{ "runtime.allm", offsetof(struct rt_layout, allm), false },
		{ "runtime.ncpu", offsetof(struct rt_layout, ncpu), false },
		{ "runtime.mbuckets", offsetof(struct rt_layout, mbuckets), false },
	};
	const struct hr_global *wr = hr_binary_find_global(bin, "runtime.waitReasonStrings");

	for (size_t i = 0; i < sizeof(globals) / sizeof(globals[0]); i++)
		if (!global_addr(exe, globals[i].name, (uint64_t *)((char *)L + globals[i].field)) &&
		    globals[i].required)
			return unknown_runtime(bin, core_path, globals[i].name, err);
	if (wr) {
		const struct hr_type *t = hr_binary_type(bin, hr_binary_resolve_typedef(bin, wr->type));

		L->wait_reason_strings = hr_image_runtime(exe, wr->addr);
		L->wait_reason_count = t->shape == HR_SHAPE_ARRAY ? t->count : 0;
	}
	return HR_OK;
}

/* The element type of the array (or pointer to array) type id, and its length. */
static uint32_t array_of(const struct hr_binary *bin, uint32_t id, uint64_t *count)
{
	const struct hr_type *t = hr_binary_type(bin, hr_binary_resolve_typedef(bin, id));

	if (t->shape == HR_SHAPE_POINTER)
		t = hr_binary_type(bin, hr_binary_resolve_typedef(bin, t->target));
	if (t->shape != HR_SHAPE_ARRAY)
		return 0;
	*count = t->count;
	return t->elem;
}

/* mheap_.arenas is [L1]*[L2]*heapArena; a heapArena's spans array has a page each. */
static int load_arenas(struct rt_layout *L, const struct hr_binary *bin, const char *core_path,
		       struct hr_error *err)
{
	uint32_t mheap = hr_binary_find_type(bin, "runtime.mheap");
	uint32_t arena = hr_binary_find_type(bin, "runtime.heapArena");
	const struct hr_member *arenas = mheap ? hr_binary_find_member(bin, mheap, "arenas") : NULL;
	const struct hr_member *spans = arena ? hr_binary_find_member(bin, arena, "spans") : NULL;
	uint64_t pages = 0;
	uint32_t l2;

	if (!arenas || !spans || !(l2 = array_of(bin, arenas->type, &L->arena_l1)) ||
	    !array_of(bin, l2, &L->arena_l2) || !array_of(bin, spans->type, &pages) || !pages)
		return unknown_runtime(bin, core_path, "runtime.mheap.arenas of runtime.heapArena",
				       err);
	L->arena_bytes = pages * 8192;
	return HR_OK;
}

int rt_layout_load(struct rt_layout *L, const struct hr_image *exe, const char *core_path,
		   struct hr_error *err)
{
	const struct hr_binary *bin = exe->bin;
	uint32_t marks = hr_binary_find_type(bin, "runtime.spanInlineMarkBits");
	int rc;

	memset(L, 0, sizeof(*L));
	if (!hr_binary_has_dwarf(bin))
		return hr_error_set(err, HR_EINPUT, "%s: reading a core needs the binary's DWARF, "
				    "and %s has none (built with -ldflags=-w?)", core_path,
				    hr_binary_path(bin));
	if ((rc = load_fields(L, bin, core_path, err)) || (rc = load_globals(L, exe, core_path, err)) ||
	    (rc = load_arenas(L, bin, core_path, err)))
		return rc;
	if (L->s_large_type.present)
		L->bitmap_bits_per_word = 0;   /* Go 1.22+: bitmaps in spans and malloc headers */
	else if (L->a_no_more_ptrs.present && L->a_bitmap.present)
		L->bitmap_bits_per_word = 1;   /* Go 1.20, 1.21 */
	else if (L->a_bitmap.present)
		L->bitmap_bits_per_word = 2;   /* Go 1.19: pointer and scan bits */
	else
		return unknown_runtime(bin, core_path, "heap bitmap (runtime.heapArena.bitmap or "
				       "runtime.mspan.largeType)", err);
	L->inline_mark_bits = marks ? hr_binary_type(bin, marks)->size : 0;
	L->bucket_size = struct_size(bin, "runtime.bucket");
	L->g_size = struct_size(bin, "runtime.g");
	L->m_size = struct_size(bin, "runtime.m");
	L->mspan_size = struct_size(bin, "runtime.mspan");
	L->special_size = struct_size(bin, "runtime.special");
	L->finblock_size = struct_size(bin, "runtime.finBlock|runtime.finblock");
	L->memrecord_size = struct_size(bin, "runtime.memRecord");
	rc = hr_binary_type(bin, find_struct(bin, "runtime.finalizer"))->size ? HR_OK : HR_EINPUT;
	L->fin_size = hr_binary_type(bin, find_struct(bin, "runtime.finalizer"))->size;
	if (rc)
		return unknown_runtime(bin, core_path, "size of runtime.finalizer", err);
	return HR_OK;
}
