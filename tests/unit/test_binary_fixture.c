/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_binary_fixture.c - the binary made by hand (src/binary/binary_fixture.h) read
 * through binary.h, as the scanner reads a real one: its Go version, limits, types by
 * id, name and runtime type (the structure before its typedef, typedef sizes and kinds
 * derived), members, globals and symbols sorted by address, functions by PC and their
 * variables at a PC; and the misuses binary_fixture_finish() refuses.
 *
 * The fixture's tables are the loader's, derived by the loader's own functions; what
 * it does not model (location lists, scopes, closures, sections) is not tested here.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "binary_fixture.h"

static struct hr_binary *finish_ok(struct binary_fixture *fx)
{
	struct hr_error err = { 0 };
	struct hr_binary *bin = binary_fixture_finish(fx, &err);

	if (!bin)
		fail_msg("binary_fixture_finish: %s", err.msg);
	return bin;
}

/* binary_fixture_finish() must refuse with HR_EUSAGE and a message holding fragment. */
static void finish_refused(struct binary_fixture *fx, const char *fragment)
{
	struct hr_error err = { 0 };

	assert_null(binary_fixture_finish(fx, &err));
	assert_int_equal(err.code, HR_EUSAGE);
	if (!strstr(err.msg, fragment))
		fail_msg("got \"%s\", want \"%s\"", err.msg, fragment);
}

static void test_empty_binary(void **state)
{
	struct binary_fixture *fx = binary_fixture_new(8, "go1.23.12");
	struct hr_binary *bin;

	(void)state;
	assert_non_null(fx);
	bin = finish_ok(fx);
	assert_string_equal(hr_binary_go_version(bin), "go1.23.12");
	assert_true(hr_binary_is_go(bin));
	assert_true(hr_binary_has_dwarf(bin));
	assert_true(hr_binary_has_symbols(bin));
	assert_false(hr_binary_has_file(bin));
	assert_int_equal(hr_binary_ptr_size(bin), 8);
	assert_int_equal(hr_binary_dwarf_version(bin), 5);
	assert_string_equal(hr_binary_build_id(bin), "");
	assert_int_equal(hr_binary_type_count(bin), 1);
	assert_string_equal(hr_binary_type(bin, 0)->name, "");
	assert_int_equal(hr_binary_type(bin, 0)->shape, HR_SHAPE_VOID);
	assert_int_equal(hr_binary_find_type(bin, "int"), 0);
	assert_int_equal(hr_binary_global_count(bin), 0);
	assert_int_equal(hr_binary_func_count(bin), 0);
	assert_int_equal(hr_binary_func_at(bin, 0x401000), -1);
	/* no runtime.types symbol: the loader's sentence for it */
	assert_non_null(strstr(hr_binary_limits(bin), "no runtime.types symbol"));
	assert_int_equal(hr_binary_type_by_runtime_addr(bin, 0x480100), 0);
	hr_binary_free(bin);
}

/*
 * main.Node as Go emits it: a typedef named like the structure (added first here),
 * the structure {next *main.Node; buf []uint8} and the pointer to it.
 */
static void test_types(void **state)
{
	struct binary_fixture *fx = binary_fixture_new(8, "go1.26.8");
	uint32_t td = binary_fixture_type(fx, &(struct hr_type){ .name = "main.Node",
					     .shape = HR_SHAPE_TYPEDEF, .target = 2 });
	uint32_t node = binary_fixture_type(fx, &(struct hr_type){ .name = "main.Node",
		.kind = HR_KIND_STRUCT, .shape = HR_SHAPE_STRUCT, .size = 32,
		.runtime_type = 0x100, .flags = HR_TYPE_HAS_RUNTIME_TYPE });
	uint32_t ptr = binary_fixture_type(fx, &(struct hr_type){ .name = "*main.Node",
		.kind = HR_KIND_PTR, .shape = HR_SHAPE_POINTER, .target = node });
	uint32_t u8 = binary_fixture_type(fx, &(struct hr_type){ .name = "uint8",
		.kind = HR_KIND_UINT8, .shape = HR_SHAPE_BASE, .size = 1 });
	uint32_t arr = binary_fixture_type(fx, &(struct hr_type){ .name = "[4]uint8",
		.kind = HR_KIND_ARRAY, .shape = HR_SHAPE_ARRAY, .size = 4, .elem = u8,
		.count = 4, .flags = HR_TYPE_HAS_COUNT });
	struct hr_binary *bin;
	const struct hr_type *t;
	const struct hr_member *m;

	(void)state;
	assert_int_equal(td, 1);
	assert_int_equal(node, 2);
	binary_fixture_member(fx, node, "next", 0, ptr);
	binary_fixture_member(fx, node, "tag", 8, arr);
	binary_fixture_symbol(fx, "runtime.types", 0x480000, 0);
	bin = finish_ok(fx);

	assert_int_equal(hr_binary_type_count(bin), 6);
	assert_int_equal(hr_binary_find_type(bin, "main.Node"), node); /* not the typedef */
	assert_int_equal(hr_binary_find_type(bin, "*main.Node"), ptr);
	assert_int_equal(hr_binary_find_type(bin, "main.Nod"), 0);
	assert_int_equal(hr_binary_resolve_typedef(bin, td), node);
	t = hr_binary_type(bin, td); /* size and kind from what it names */
	assert_int_equal(t->size, 32);
	assert_int_equal(t->kind, HR_KIND_STRUCT);
	t = hr_binary_type(bin, ptr);
	assert_int_equal(t->size, 8); /* a pointer without size: the pointer size */
	assert_int_equal(t->target, node);
	t = hr_binary_type(bin, node);
	assert_int_equal(t->member_count, 2);
	m = hr_binary_member(bin, t->first_member + 1);
	assert_string_equal(m->name, "tag");
	assert_int_equal(m->offset, 8);
	assert_int_equal(m->type, arr);
	assert_ptr_equal(hr_binary_find_member(bin, td, "next"), hr_binary_member(bin, t->first_member));
	assert_null(hr_binary_find_member(bin, node, "buf"));
	assert_int_equal(hr_binary_type(bin, arr)->count, 4);
	/* a type word is runtime.types + the type's runtime_type */
	assert_int_equal(hr_binary_type_by_runtime_addr(bin, 0x480100), node);
	assert_int_equal(hr_binary_type_by_runtime_addr(bin, 0x480108), 0);
	assert_int_equal(hr_binary_runtime_type_addr(bin, node), 0x480100);
	assert_int_equal(hr_binary_runtime_type_addr(bin, ptr), 0);
	assert_string_equal(hr_binary_limits(bin), "");
	hr_binary_free(bin);
}

/* Members added to two structs by turns: each struct's stay together, in order. */
static void test_members_by_turns(void **state)
{
	struct binary_fixture *fx = binary_fixture_new(8, "go1.26.8");
	uint32_t a = binary_fixture_type(fx, &(struct hr_type){ .name = "A", .kind = HR_KIND_STRUCT,
							       .shape = HR_SHAPE_STRUCT, .size = 16 });
	uint32_t b = binary_fixture_type(fx, &(struct hr_type){ .name = "B", .kind = HR_KIND_STRUCT,
							       .shape = HR_SHAPE_STRUCT, .size = 8 });
	struct hr_binary *bin;
	const struct hr_type *t;

	(void)state;
	binary_fixture_member(fx, a, "x", 0, b);
	binary_fixture_member(fx, b, "y", 0, 0);
	binary_fixture_member(fx, a, "z", 8, 0);
	bin = finish_ok(fx);
	t = hr_binary_type(bin, a);
	assert_int_equal(t->member_count, 2);
	assert_string_equal(hr_binary_member(bin, t->first_member)->name, "x");
	assert_int_equal(hr_binary_member(bin, t->first_member)->type, b);
	assert_string_equal(hr_binary_member(bin, t->first_member + 1)->name, "z");
	assert_int_equal(hr_binary_member(bin, t->first_member + 1)->offset, 8);
	t = hr_binary_type(bin, b);
	assert_int_equal(t->member_count, 1);
	assert_string_equal(hr_binary_member(bin, t->first_member)->name, "y");
	assert_null(hr_binary_member(bin, 3));
	hr_binary_free(bin);
}

static void test_globals_and_symbols(void **state)
{
	struct binary_fixture *fx = binary_fixture_new(8, "go1.26.8");
	uint32_t i64 = binary_fixture_type(fx, &(struct hr_type){ .name = "int64",
		.kind = HR_KIND_INT64, .shape = HR_SHAPE_BASE, .size = 8 });
	uint32_t pair = binary_fixture_type(fx, &(struct hr_type){ .name = "[2]int64",
		.kind = HR_KIND_ARRAY, .shape = HR_SHAPE_ARRAY, .size = 16, .elem = i64,
		.count = 2, .flags = HR_TYPE_HAS_COUNT });
	struct hr_binary *bin;

	(void)state;
	binary_fixture_global(fx, "main.b", 0x500010, pair); /* out of order */
	binary_fixture_global(fx, "main.a", 0x500000, i64);
	binary_fixture_symbol(fx, "main.stmp_1", 0x500040, 16);
	binary_fixture_symbol(fx, "runtime.bss", 0x600000, 0);
	binary_fixture_symbol(fx, "main.c", 0x500020, 8);
	bin = finish_ok(fx);

	assert_int_equal(hr_binary_global_count(bin), 2);
	assert_string_equal(hr_binary_global(bin, 0)->name, "main.a");
	assert_string_equal(hr_binary_global(bin, 1)->name, "main.b");
	assert_string_equal(hr_binary_global_at(bin, 0x500018)->name, "main.b");
	assert_string_equal(hr_binary_global_at(bin, 0x500007)->name, "main.a");
	assert_null(hr_binary_global_at(bin, 0x500008)); /* past main.a's 8 bytes */
	assert_null(hr_binary_global_at(bin, 0x500020));
	assert_int_equal(hr_binary_find_global(bin, "main.b")->addr, 0x500010);
	assert_int_equal(hr_binary_symbol_count(bin), 3);
	assert_string_equal(hr_binary_symbol(bin, 0)->name, "main.c");
	assert_string_equal(hr_binary_symbol(bin, 2)->name, "runtime.bss");
	assert_string_equal(hr_binary_symbol_at(bin, 0x500048)->name, "main.stmp_1");
	assert_null(hr_binary_symbol_at(bin, 0x500050));
	assert_string_equal(hr_binary_symbol_at(bin, 0x600000)->name, "runtime.bss");
	assert_int_equal(hr_binary_find_symbol(bin, "main.c")->addr, 0x500020);
	hr_binary_free(bin);
}

static void test_functions_and_variables(void **state)
{
	struct binary_fixture *fx = binary_fixture_new(8, "go1.26.8");
	uint32_t i64 = binary_fixture_type(fx, &(struct hr_type){ .name = "int64",
		.kind = HR_KIND_INT64, .shape = HR_SHAPE_BASE, .size = 8 });
	struct hr_frame_vars fv = { 0 };
	struct hr_error err = { 0 };
	struct hr_binary *bin;
	size_t count = 9;
	char where[64];

	(void)state;
	binary_fixture_func(fx, "main.worker", 0x401000, 0x401100);
	binary_fixture_var(fx, "n", i64, true, 8);
	binary_fixture_var(fx, "sum", i64, false, -24);
	binary_fixture_func(fx, "main.main", 0x401100, 0x401180);
	bin = finish_ok(fx);

	assert_int_equal(hr_binary_func_count(bin), 2);
	assert_int_equal(hr_binary_func_at(bin, 0x401000), 0);
	assert_int_equal(hr_binary_func_at(bin, 0x4010ff), 0);
	assert_int_equal(hr_binary_func_at(bin, 0x401100), 1);
	assert_int_equal(hr_binary_func_at(bin, 0x401180), -1);
	assert_string_equal(hr_binary_func(bin, 1)->name, "main.main");

	assert_int_equal(hr_binary_func_vars(bin, 0, 0x401050, &fv, &err), 0);
	assert_int_equal(fv.count, 2);
	assert_string_equal(fv.vars[0].name, "n");
	assert_true(fv.vars[0].is_param);
	assert_true(fv.vars[0].in_scope);
	assert_int_equal(fv.vars[0].piece_count, 1);
	assert_int_equal(fv.pieces[fv.vars[0].first_piece].kind, HR_LOC_CFA);
	assert_int_equal(fv.pieces[fv.vars[0].first_piece].offset, 8);
	assert_string_equal(fv.vars[1].name, "sum");
	assert_false(fv.vars[1].is_param);
	assert_int_equal(fv.vars[1].type, i64);
	assert_int_equal(fv.pieces[fv.vars[1].first_piece].offset, -24);
	assert_int_equal(hr_binary_describe_var(bin, 0, 1, where, sizeof(where), &err), 0);
	assert_string_equal(where, "cfa-24");
	assert_int_equal(hr_binary_func_var_count(bin, 1, &count, &err), 0);
	assert_int_equal(count, 0);
	assert_int_equal(hr_binary_func_vars(bin, 1, 0x401100, &fv, &err), 0);
	assert_int_equal(fv.count, 0);
	hr_frame_vars_release(&fv);
	hr_binary_free(bin);
}

static void test_misuse_refused(void **state)
{
	struct binary_fixture *fx;
	uint32_t a;

	(void)state;
	fx = binary_fixture_new(8, "go1.26.8");
	a = binary_fixture_type(fx, &(struct hr_type){ .name = "int", .kind = HR_KIND_INT,
						       .shape = HR_SHAPE_BASE, .size = 8 });
	binary_fixture_member(fx, a, "x", 0, a);
	finish_refused(fx, "a member of a type that is no struct");

	fx = binary_fixture_new(8, "go1.26.8");
	binary_fixture_type(fx, &(struct hr_type){ .name = "*T", .shape = HR_SHAPE_POINTER,
						   .target = 7 });
	finish_refused(fx, "type 1 (*T) refers to no type");

	fx = binary_fixture_new(8, "go1.26.8");
	binary_fixture_global(fx, "main.x", 0x500000, 3);
	finish_refused(fx, "global main.x is of no type");

	fx = binary_fixture_new(8, "go1.26.8");
	binary_fixture_var(fx, "x", 0, false, 0);
	finish_refused(fx, "a variable before any function");

	fx = binary_fixture_new(8, "go1.26.8");
	binary_fixture_func(fx, "f", 0x401000, 0x401100);
	binary_fixture_var(fx, "x", 5, false, -8);
	finish_refused(fx, "variable x is of no type");

	fx = binary_fixture_new(8, "go1.26.8");
	binary_fixture_func(fx, "g", 0x402000, 0x402100);
	binary_fixture_func(fx, "f", 0x401000, 0x401100);
	finish_refused(fx, "functions out of address order");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty_binary),
		cmocka_unit_test(test_types),
		cmocka_unit_test(test_members_by_turns),
		cmocka_unit_test(test_globals_and_symbols),
		cmocka_unit_test(test_functions_and_variables),
		cmocka_unit_test(test_misuse_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
