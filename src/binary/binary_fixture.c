/* SPDX-License-Identifier: Apache-2.0 */
/*
 * binary_fixture.c - a struct hr_binary made by hand for the unit tests (see
 * binary_fixture.h). The adders fill the very tables binary_dwarf.c and binary_elf.c
 * fill from a file, and binary_fixture_finish() derives from them with the loader's
 * own functions (binary.c), so the lookups of binary.h need nothing of their own.
 * Function variables go straight into the cache binary_vars.c would fill on the first
 * request, so libdwarf is never asked.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <dwarf.h>

#include "binary_fixture.h"
#include "binary_internal.h"

struct binary_fixture {
	struct hr_binary *bin;
	struct hr_error err;               /* the first failure of an adder */
	VEC(uint32_t, owners);             /* the struct of each of bin->members, as added */
	VEC(struct func_vars *, fvs);      /* one per function, moved into bin at the end */
};

#define FIXTURE_PATH "(fixture)"

/* Records a failure (the first one is kept); returns 0, the failed adder's id. */
static uint32_t fail(struct binary_fixture *fx, int code, const char *what)
{
	hr_error_set(&fx->err, code, "%s: %s", FIXTURE_PATH, what);
	return 0;
}

static const char *copy(struct binary_fixture *fx, const char *s)
{
	const char *out = strtab_add(&fx->bin->strings, s, strlen(s));

	if (!out)
		fail(fx, HR_ENOMEM, "out of memory");
	return out;
}

struct binary_fixture *binary_fixture_new(unsigned ptr_size, const char *go_version)
{
	struct binary_fixture *fx = calloc(1, sizeof(*fx));
	struct hr_binary *bin = calloc(1, sizeof(*bin));

	if (!fx || !bin || !(bin->path = strdup(FIXTURE_PATH))) {
		free(fx);
		free(bin);
		return NULL;
	}
	fx->bin = bin;
	bin->fd = -1;
	binary_vars_init(bin);
	bin->ptr_size = ptr_size;
	bin->has_dwarf = true;
	bin->dwarf_version = 5;
	bin->has_symtab = true;
	if (strlen(go_version) >= sizeof(bin->go_version))
		fail(fx, HR_EUSAGE, "Go version too long");
	else
		strcpy(bin->go_version, go_version);
	if (!VEC_PUSH(bin, types) || !(bin->types[0].name = copy(fx, ""))) /* id 0: void */
		fail(fx, HR_ENOMEM, "out of memory");
	return fx;
}

uint32_t binary_fixture_type(struct binary_fixture *fx, const struct hr_type *t)
{
	struct hr_binary *bin = fx->bin;
	const char *name = copy(fx, t->name ? t->name : "");
	struct hr_type *out;

	if (!name || !(out = VEC_PUSH(bin, types)))
		return fail(fx, HR_ENOMEM, "out of memory");
	*out = *t;
	out->name = name;
	out->first_member = 0;
	out->member_count = 0;
	if (!out->size && out->shape == HR_SHAPE_POINTER) /* as binary_dwarf.c does */
		out->size = bin->ptr_size;
	return (uint32_t)(bin->types_n - 1);
}

void binary_fixture_member(struct binary_fixture *fx, uint32_t struct_id, const char *name,
			   uint64_t offset, uint32_t type)
{
	struct hr_binary *bin = fx->bin;
	const char *copied;
	struct hr_member *m;
	uint32_t *owner;

	if (struct_id >= bin->types_n || bin->types[struct_id].shape != HR_SHAPE_STRUCT) {
		fail(fx, HR_EUSAGE, "a member of a type that is no struct");
		return;
	}
	/* an owner for every member: members_n never exceeds owners_n */
	if (!(copied = copy(fx, name)) || !(owner = VEC_PUSH(fx, owners)) ||
	    !(m = VEC_PUSH(bin, members))) {
		fail(fx, HR_ENOMEM, "out of memory");
		return;
	}
	*owner = struct_id;
	bin->types[struct_id].member_count++;
	*m = (struct hr_member){ .name = copied, .offset = offset, .type = type };
}

/*
 * Puts each struct's members together, in the order added (as the loader has them,
 * from the struct's DIE children), and points the struct at them.
 */
static int group_members(struct binary_fixture *fx)
{
	struct hr_binary *bin = fx->bin;
	size_t n = bin->members_n;
	struct hr_member *grouped = calloc(n ? n : 1, sizeof(*grouped));
	uint32_t next = 0;

	if (!grouped)
		return HR_ENOMEM;
	for (size_t id = 1; id < bin->types_n; id++) {
		struct hr_type *t = &bin->types[id];

		if (t->shape != HR_SHAPE_STRUCT)
			continue;
		t->first_member = next;
		next += t->member_count;
		t->member_count = 0;
	}
	for (size_t i = 0; i < n; i++) {
		struct hr_type *t = &bin->types[fx->owners[i]];

		grouped[t->first_member + t->member_count++] = bin->members[i];
	}
	free(bin->members);
	bin->members = grouped;
	bin->members_cap = n ? n : 1;
	return HR_OK;
}

void binary_fixture_global(struct binary_fixture *fx, const char *name, uint64_t addr,
			   uint32_t type)
{
	const char *copied = copy(fx, name);
	struct hr_global *g = copied ? VEC_PUSH(fx->bin, globals) : NULL;

	if (!g) {
		fail(fx, HR_ENOMEM, "out of memory");
		return;
	}
	*g = (struct hr_global){ .name = copied, .addr = addr, .type = type };
}

void binary_fixture_symbol(struct binary_fixture *fx, const char *name, uint64_t addr,
			   uint64_t size)
{
	struct hr_binary *bin = fx->bin;
	const char *copied = copy(fx, name);
	struct hr_symbol *s = copied ? VEC_PUSH(bin, symbols) : NULL;

	if (!s) {
		fail(fx, HR_ENOMEM, "out of memory");
		return;
	}
	*s = (struct hr_symbol){ .name = copied, .addr = addr, .size = size, .type = STT_OBJECT };
	if (!strcmp(name, "runtime.types")) { /* as binary_elf.c does */
		bin->has_runtime_types = true;
		bin->runtime_types = addr;
	}
}

void binary_fixture_func(struct binary_fixture *fx, const char *name, uint64_t low_pc,
			 uint64_t high_pc)
{
	struct hr_binary *bin = fx->bin;
	const char *copied;
	struct func_vars **slot;
	struct hr_func *f;

	if (low_pc >= high_pc || (bin->funcs_n && low_pc < bin->funcs[bin->funcs_n - 1].high_pc)) {
		fail(fx, HR_EUSAGE, "functions out of address order, overlapping or empty");
		return;
	}
	/* its (empty) variables first: funcs_n never exceeds the variables held */
	if (!(copied = copy(fx, name)) || !(slot = VEC_PUSH(fx, fvs)) ||
	    !(*slot = calloc(1, sizeof(**slot))) || !(f = VEC_PUSH(bin, funcs))) {
		fail(fx, HR_ENOMEM, "out of memory");
		return;
	}
	*f = (struct hr_func){ .name = copied, .low_pc = low_pc, .high_pc = high_pc };
}

void binary_fixture_var(struct binary_fixture *fx, const char *name, uint32_t type,
			bool is_param, int64_t cfa_offset)
{
	struct func_vars *fv = fx->bin->funcs_n ? fx->fvs[fx->bin->funcs_n - 1] : NULL;
	const char *copied;
	struct raw_var *v;
	struct var_entry *e;
	struct hr_loc_op *op;

	if (!fv) {
		fail(fx, HR_EUSAGE, "a variable before any function");
		return;
	}
	if (!(copied = copy(fx, name)) || !(v = VEC_PUSH(fv, vars)) ||
	    !(e = VEC_PUSH(fv, entries)) || !(op = VEC_PUSH(fv, ops))) {
		fail(fx, HR_ENOMEM, "out of memory");
		return;
	}
	*v = (struct raw_var){ .name = copied, .type = type, .is_param = is_param,
			       .first_entry = (uint32_t)(fv->entries_n - 1), .entry_count = 1 };
	*e = (struct var_entry){ .all_pcs = true, .first_op = (uint32_t)(fv->ops_n - 1),
				 .op_count = 1 };
	*op = (struct hr_loc_op){ .op = DW_OP_fbreg, .n1 = (uint64_t)cfa_offset };
}

/* Whether every type id the tables hold names a type; the first that does not in err. */
static bool ids_in_range(const struct hr_binary *bin, struct hr_error *err)
{
	uint32_t n = (uint32_t)bin->types_n;

	for (uint32_t id = 1; id < n; id++) {
		const struct hr_type *t = &bin->types[id];

		if (t->target >= n || t->elem >= n || t->key >= n)
			return !hr_error_set(err, HR_EUSAGE, "%s: type %" PRIu32 " (%s) refers to "
					     "no type", FIXTURE_PATH, id, t->name);
	}
	for (size_t i = 0; i < bin->members_n; i++)
		if (bin->members[i].type >= n)
			return !hr_error_set(err, HR_EUSAGE, "%s: member %s is of no type",
					     FIXTURE_PATH, bin->members[i].name);
	for (size_t i = 0; i < bin->globals_n; i++)
		if (bin->globals[i].type >= n)
			return !hr_error_set(err, HR_EUSAGE, "%s: global %s is of no type",
					     FIXTURE_PATH, bin->globals[i].name);
	for (size_t f = 0; f < bin->funcs_n; f++)
		for (size_t i = 0; i < bin->func_vars[f]->vars_n; i++)
			if (bin->func_vars[f]->vars[i].type >= n)
				return !hr_error_set(err, HR_EUSAGE, "%s: variable %s is of no type",
						     FIXTURE_PATH, bin->func_vars[f]->vars[i].name);
	return true;
}

struct hr_binary *binary_fixture_finish(struct binary_fixture *fx, struct hr_error *err)
{
	struct hr_binary *bin = fx->bin;
	bool failed = fx->err.code != HR_OK;

	/* the binary owns the variables from here: hr_binary_free() frees them */
	bin->func_vars = fx->fvs;
	if (fx->fvs_n > bin->funcs_n) /* the last function failed after its variables */
		free(fx->fvs[--fx->fvs_n]);
	if (!failed && group_members(fx)) {
		fail(fx, HR_ENOMEM, "out of memory");
		failed = true;
	}
	if (failed)
		hr_error_set(err, fx->err.code, "%s", fx->err.msg);
	free(fx->owners);
	free(fx);
	if (failed || !ids_in_range(bin, err))
		goto fail;
	binary_derive_typedefs(bin);
	binary_elf_sort_symbols(bin);
	if (binary_build_indexes(bin, err))
		goto fail;
	binary_describe_limits(bin);
	return bin;
fail:
	hr_binary_free(bin);
	return NULL;
}
