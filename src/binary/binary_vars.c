/* SPDX-License-Identifier: Apache-2.0 */
/*
 * binary_vars.c - the parameters and locals of functions, loaded from DWARF the first
 * time a function is asked for and cached in bin->func_vars[index]. The first request
 * opens the libdwarf handle that sees the location lists (binary_dwarf_open_vars()).
 *
 * A function's DIE subtree is walked once: every DW_TAG_formal_parameter and
 * DW_TAG_variable (also inside lexical blocks and inlined calls, whose names and types
 * may come through DW_AT_abstract_origin) becomes a raw variable with its location
 * list copied out of libdwarf as operations. Evaluating at a PC then needs no libdwarf:
 * pick the list entry covering the PC and run binary_loc.c's evaluator.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binary_dwarf_internal.h"

#define MAX_DEPTH 64         /* nesting of blocks and inlined calls */
#define MAX_PIECES 64        /* pieces per variable location */

struct walk {
	struct hr_binary *bin;
	struct func_vars *fv;
	struct hr_error *err;
	unsigned depth;
	bool scoped;
	uint64_t scope_lo, scope_hi;
};

static int nomem(const struct hr_binary *bin, struct hr_error *err)
{
	return hr_error_set(err, HR_ENOMEM, "%s: out of memory while reading variables", bin->path);
}

/* ---- copying a location list out of libdwarf ---------------------------------------------- */

static int copy_ops(struct walk *w, Dwarf_Die die, struct dwc_loc_entry *le,
		    struct var_entry *ve, Dwarf_Error *derr)
{
	ve->first_op = (uint32_t)w->fv->ops_n;
	if (le->op_count > HR_LOC_MAX_OPS)
		return DW_DLV_OK; /* op_count 0: evaluates to "none" */
	for (Dwarf_Unsigned i = 0; i < le->op_count; i++) {
		Dwarf_Small atom = 0;
		Dwarf_Unsigned n1 = 0, n2 = 0, n3 = 0, branch = 0;
		struct hr_loc_op *op;
		int rc = dwarf_get_location_op_value_c(le->desc, i, &atom, &n1, &n2, &n3, &branch,
							derr);

		if (rc != DW_DLV_OK)
			return rc;
		if (atom == DW_OP_addrx || atom == DW_OP_constx) {
			Dwarf_Addr addr = 0;

			rc = dwarf_debug_addr_index_to_addr(die, n1, &addr, derr);
			if (rc != DW_DLV_OK)
				return rc;
			atom = atom == DW_OP_addrx ? DW_OP_addr : DW_OP_constu;
			n1 = addr;
		}
		op = VEC_PUSH(w->fv, ops);
		if (!op)
			return DW_DLV_ERROR;
		op->op = atom;
		op->n1 = n1;
		op->n2 = n2;
		ve->op_count++;
	}
	return DW_DLV_OK;
}

static int copy_entries(struct walk *w, Dwarf_Die die, Dwarf_Loc_Head_c head,
			Dwarf_Unsigned count, struct raw_var *v, Dwarf_Error *derr)
{
	for (Dwarf_Unsigned i = 0; i < count; i++) {
		struct dwc_loc_entry le;
		struct var_entry *ve;
		int rc = dwc_loc_entry(head, i, &le, derr);

		if (rc != DW_DLV_OK)
			return rc;
		if (le.skip)
			continue;
		ve = VEC_PUSH(w->fv, entries);
		if (!ve)
			return DW_DLV_ERROR;
		ve->all_pcs = le.all_pcs;
		ve->low = le.low_pc;
		ve->high = le.high_pc;
		v->entry_count++;
		rc = copy_ops(w, die, &le, &w->fv->entries[w->fv->entries_n - 1], derr);
		if (rc != DW_DLV_OK)
			return rc;
	}
	return DW_DLV_OK;
}

/*
 * Whether libdwarf may be asked for the location attr gives. A DWARF 5 location list is
 * checked first, as libdwarf 20210528 crashes on some corrupt ones (dwc_loclist_whole());
 * one given by DW_FORM_loclistx is never read (neither Go nor gcc writes them). An
 * expression, or a list in DWARF 4's .debug_loc, goes to libdwarf as it is.
 */
static bool location_readable(struct walk *w, Dwarf_Die die, Dwarf_Attribute attr)
{
	Dwarf_Debug dbg = w->bin->dw->dbg;
	Dwarf_Half form = 0, version = 0, offset_size = 0;
	Dwarf_Off off = 0;
	Dwarf_Error derr = NULL;
	bool ok = false;

	if (dwarf_whatform(attr, &form, &derr) == DW_DLV_OK &&
	    dwarf_get_version_of_die(die, &version, &offset_size) == DW_DLV_OK) {
		if (form != DW_FORM_sec_offset || version < 5)
			ok = form != DW_FORM_loclistx;
		else if (dwarf_global_formref(attr, &off, &derr) == DW_DLV_OK)
			ok = dwc_loclist_whole(w->bin->dw->obj, off);
	}
	if (derr)
		dwarf_dealloc(dbg, derr, DW_DLA_ERROR);
	return ok;
}

static int read_location(struct walk *w, Dwarf_Die die, struct raw_var *v, uint64_t die_off)
{
	Dwarf_Debug dbg = w->bin->dw->dbg;
	Dwarf_Attribute attr = NULL;
	Dwarf_Loc_Head_c head = NULL;
	Dwarf_Unsigned count = 0;
	Dwarf_Error derr = NULL;
	int rc = dwarf_attr(die, DW_AT_location, &attr, &derr);

	v->first_entry = (uint32_t)w->fv->entries_n;
	if (rc == DW_DLV_NO_ENTRY)
		return HR_OK;
	if (rc == DW_DLV_OK && !location_readable(w, die, attr))
		rc = DW_DLV_NO_ENTRY; /* as if it had none: "none" at every PC */
	if (rc == DW_DLV_OK)
		rc = dwarf_get_loclist_c(attr, &head, &count, &derr);
	if (rc == DW_DLV_OK)
		rc = copy_entries(w, die, head, count, v, &derr);
	dwc_loc_free(dbg, head);
	if (attr)
		dwarf_dealloc_attribute(attr);
	if (rc == DW_DLV_ERROR && !derr)
		return nomem(w->bin, w->err);
	if (rc == DW_DLV_ERROR)
		return dw_fail(w->bin, derr, die_off, "cannot read a location", w->err);
	return HR_OK;
}

/* ---- the walk --------------------------------------------------------------------------- */

/* Fills name and type from the DIE DW_AT_abstract_origin points to. */
static int read_origin(struct walk *w, struct die_info *info)
{
	Dwarf_Error derr = NULL;
	Dwarf_Die odie = NULL;
	struct die_info o = { 0 };
	int rc = dwarf_offdie_b(w->bin->dw->dbg, info->origin_off, 1, &odie, &derr);

	if (rc != DW_DLV_OK)
		return dw_fail(w->bin, derr, info->offset, "bad DW_AT_abstract_origin", w->err);
	rc = dw_read_die(w->bin, odie, &o, w->err);
	if (!rc) {
		if (!info->name && o.name)
			info->name = (char *)strtab_add(&w->bin->strings, o.name, strlen(o.name));
		if (!info->has_type && o.has_type) {
			info->type_off = o.type_off;
			info->has_type = true;
		}
	}
	dwarf_dealloc_die(odie);
	return rc;
}

static int add_var(struct walk *w, Dwarf_Die die, struct die_info *info)
{
	struct raw_var *v;
	const char *name;
	int rc = info->has_origin ? read_origin(w, info) : HR_OK;

	if (rc)
		return rc;
	name = strtab_add(&w->bin->strings, info->name ? info->name : "",
			  info->name ? strlen(info->name) : 0);
	v = VEC_PUSH(w->fv, vars);
	if (!name || !v)
		return nomem(w->bin, w->err);
	v->name = name;
	v->type = binary_type_id(w->bin, info->has_type ? info->type_off : 0);
	v->is_param = info->tag == DW_TAG_formal_parameter;
	v->has_closure = info->has_closure;
	v->closure_off = info->closure_off;
	v->scoped = w->scoped;
	v->scope_lo = w->scope_lo;
	v->scope_hi = w->scope_hi;
	return read_location(w, die, &w->fv->vars[w->fv->vars_n - 1], info->offset);
}

static int child_cb(void *ctx, Dwarf_Die die);

static int enter_block(struct walk *w, Dwarf_Die die, const struct die_info *info)
{
	struct walk inner = *w;

	if (w->depth >= MAX_DEPTH)
		return hr_error_set(w->err, HR_EINPUT, "%s: DWARF DIE at 0x%" PRIx64
				    ": blocks nested more than %d deep", w->bin->path,
				    (uint64_t)info->offset, MAX_DEPTH);
	inner.depth++;
	if (info->has_low && info->has_high) {
		inner.scoped = true;
		inner.scope_lo = info->low_pc;
		inner.scope_hi = info->high_pc;
	}
	return dw_children(w->bin, die, child_cb, &inner, w->err);
}

static int child_cb(void *ctx, Dwarf_Die die)
{
	struct walk *w = ctx;
	struct die_info info = { 0 };
	int rc = dw_read_die(w->bin, die, &info, w->err);

	if (rc)
		return rc;
	switch (info.tag) {
	case DW_TAG_formal_parameter:
	case DW_TAG_variable:
		return add_var(w, die, &info);
	case DW_TAG_lexical_block:
	case DW_TAG_inlined_subroutine:
		return enter_block(w, die, &info);
	default:
		return HR_OK;
	}
}

static void func_vars_free(struct func_vars *fv)
{
	if (!fv)
		return;
	free(fv->vars);
	free(fv->entries);
	free(fv->ops);
	free(fv);
}

/* Reads function index's variables from DWARF into bin->func_vars[index]; vars_lock held. */
static int read_func(struct hr_binary *bin, size_t index, struct hr_error *err)
{
	struct func_vars *fv;
	struct walk w = { .bin = bin, .err = err };
	Dwarf_Error derr = NULL;
	Dwarf_Die die = NULL;
	int rc;

	if (!bin->func_vars &&
	    !(bin->func_vars = calloc(bin->funcs_n, sizeof(*bin->func_vars))))
		return nomem(bin, err);
	if (bin->func_vars[index])
		return HR_OK; /* another thread read it meanwhile */
	rc = binary_dwarf_open_vars(bin, err);
	if (rc)
		return rc;
	fv = calloc(1, sizeof(*fv));
	if (!fv)
		return nomem(bin, err);
	rc = dwarf_offdie_b(bin->dw->dbg, bin->func_offsets[index], 1, &die, &derr);
	if (rc != DW_DLV_OK) {
		func_vars_free(fv);
		return dw_fail(bin, derr, bin->func_offsets[index], "cannot read the function", err);
	}
	w.fv = fv;
	rc = dw_children(bin, die, child_cb, &w, err);
	dwarf_dealloc_die(die);
	if (rc) {
		func_vars_free(fv);
		return rc;
	}
	__atomic_store_n(&bin->func_vars[index], fv, __ATOMIC_RELEASE);
	return HR_OK;
}

/*
 * The variables of function index, read the first time: the binary is shared by pass
 * 1's threads, so the read is under vars_lock, and the pointer, set once, is read
 * without it. (Writing to *bin here is the one change a binary knows after it is
 * opened; the object was allocated writable, binary_new().)
 */
static int load_func(const struct hr_binary *bin, size_t index, const struct func_vars **out,
		     struct hr_error *err)
{
	struct hr_binary *mut = (struct hr_binary *)bin;
	struct func_vars **all;
	int rc;

	if (index >= bin->funcs_n)
		return hr_error_set(err, HR_EUSAGE, "%s: no function %zu", bin->path, index);
	all = __atomic_load_n(&mut->func_vars, __ATOMIC_ACQUIRE);
	if (all && (*out = __atomic_load_n(&all[index], __ATOMIC_ACQUIRE)))
		return HR_OK;
	pthread_mutex_lock(&mut->vars_lock);
	rc = read_func(mut, index, err);
	pthread_mutex_unlock(&mut->vars_lock);
	if (!rc)
		*out = mut->func_vars[index];
	return rc;
}

void binary_vars_init(struct hr_binary *bin)
{
	pthread_mutex_init(&bin->vars_lock, NULL);
}

void binary_vars_free(struct hr_binary *bin)
{
	if (bin->func_vars) {
		for (size_t i = 0; i < bin->funcs_n; i++)
			func_vars_free(bin->func_vars[i]);
		free(bin->func_vars);
	}
	pthread_mutex_destroy(&bin->vars_lock);
}

/* ---- evaluation at a PC --------------------------------------------------------------------- */

static const struct var_entry *entry_at(const struct func_vars *fv, const struct raw_var *v,
					uint64_t pc)
{
	for (uint32_t i = 0; i < v->entry_count; i++) {
		const struct var_entry *e = &fv->entries[v->first_entry + i];

		if (e->all_pcs || (pc >= e->low && pc < e->high))
			return e;
	}
	return NULL;
}

static size_t eval_entry(const struct func_vars *fv, const struct var_entry *e,
			 struct hr_loc_piece *pieces, size_t max)
{
	if (!e || e->op_count == 0) {
		memset(pieces, 0, sizeof(*pieces));
		return 1;
	}
	return hr_loc_eval(&fv->ops[e->first_op], e->op_count, pieces, max);
}

static int push_var(struct hr_frame_vars *out, const struct raw_var *v,
		    const struct hr_loc_piece *pieces, size_t n, bool in_scope)
{
	struct hr_var *hv;

	if (hr_array_reserve((void **)&out->pieces, &out->piece_cap, out->piece_count + n,
			     sizeof(*out->pieces)))
		return HR_ENOMEM;
	hv = hr_array_push((void **)&out->vars, &out->count, &out->cap, sizeof(*out->vars));
	if (!hv)
		return HR_ENOMEM;
	hv->name = v->name;
	hv->type = v->type;
	hv->is_param = v->is_param;
	hv->in_scope = in_scope;
	hv->has_closure_offset = v->has_closure;
	hv->closure_offset = v->closure_off;
	hv->first_piece = (uint32_t)out->piece_count;
	hv->piece_count = (uint32_t)n;
	memcpy(&out->pieces[out->piece_count], pieces, n * sizeof(*pieces));
	out->piece_count += n;
	return HR_OK;
}

int hr_binary_func_vars(const struct hr_binary *bin, size_t index, uint64_t elf_pc,
			struct hr_frame_vars *out, struct hr_error *err)
{
	struct hr_loc_piece pieces[MAX_PIECES];
	const struct func_vars *fv = NULL;
	int rc = load_func(bin, index, &fv, err);

	out->count = 0;
	out->piece_count = 0;
	if (rc)
		return rc;
	for (size_t i = 0; i < fv->vars_n; i++) {
		const struct raw_var *v = &fv->vars[i];
		bool in_scope = !v->scoped || (elf_pc >= v->scope_lo && elf_pc < v->scope_hi);
		size_t n = 1;

		memset(pieces, 0, sizeof(pieces[0]));
		if (in_scope)
			n = eval_entry(fv, entry_at(fv, v, elf_pc), pieces, MAX_PIECES);
		if (push_var(out, v, pieces, n, in_scope))
			return nomem(bin, err);
	}
	return HR_OK;
}

int hr_binary_func_var_count(const struct hr_binary *bin, size_t index, size_t *count,
			     struct hr_error *err)
{
	const struct func_vars *fv = NULL;
	int rc = load_func(bin, index, &fv, err);

	*count = rc ? 0 : fv->vars_n;
	return rc;
}

/* Appends "[lo, hi): location" (or just the location for an expression) to buf;
 * addresses plus bias. */
static size_t describe_entry(const struct hr_binary *bin, uint64_t bias,
			     const struct func_vars *fv, const struct var_entry *e, char *buf,
			     size_t len)
{
	struct hr_loc_piece pieces[MAX_PIECES];
	char loc[256];
	size_t n = eval_entry(fv, e, pieces, MAX_PIECES);
	int w;

	for (size_t i = 0; i < n; i++)
		if (pieces[i].kind == HR_LOC_ADDR)
			pieces[i].offset = (int64_t)((uint64_t)pieces[i].offset + bias);
	hr_loc_format(pieces, n, loc, sizeof(loc));
	if (e->all_pcs)
		w = snprintf(buf, len, "%s", loc);
	else
		w = snprintf(buf, len, "[0x%" PRIx64 ",0x%" PRIx64 "):%s", e->low + bias,
			     e->high + bias, loc);
	return w < 0 ? 0 : (size_t)w < len ? (size_t)w : len ? len - 1 : 0;
}

int binary_describe_var(const struct hr_binary *bin, uint64_t bias, size_t index,
			size_t var_index, char *buf, size_t len, struct hr_error *err)
{
	const struct func_vars *fv = NULL;
	const struct raw_var *v;
	size_t used = 0;
	int rc = load_func(bin, index, &fv, err);

	if (rc)
		return rc;
	if (var_index >= fv->vars_n)
		return hr_error_set(err, HR_EUSAGE, "%s: no variable %zu", bin->path, var_index);
	v = &fv->vars[var_index];
	if (len)
		snprintf(buf, len, "%s", v->entry_count ? "" : "none");
	for (uint32_t i = 0; i < v->entry_count && used + 2 < len; i++) {
		if (i)
			buf[used++] = ' ';
		used += describe_entry(bin, bias, fv, &fv->entries[v->first_entry + i],
				       buf + used, len - used);
	}
	return HR_OK;
}

int hr_binary_describe_var(const struct hr_binary *bin, size_t index, size_t var_index,
			   char *buf, size_t len, struct hr_error *err)
{
	return binary_describe_var(bin, 0, index, var_index, buf, len, err);
}

void hr_frame_vars_release(struct hr_frame_vars *vars)
{
	if (!vars)
		return;
	free(vars->vars);
	free(vars->pieces);
	memset(vars, 0, sizeof(*vars));
}
