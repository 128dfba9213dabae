/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_binary_loc.c - unit tests of the binary reader without a Go toolchain:
 * location expressions decoded from hand-made bytes and evaluated, and hr_binary_open
 * on files that are not (or no longer) valid executables.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <dwarf.h>

#include "binary_internal.h"

/* Decodes and evaluates bytes; returns the number of pieces. */
static size_t run(const uint8_t *bytes, size_t len, struct hr_loc_piece *pieces, size_t max)
{
	struct hr_loc_op ops[64];
	struct hr_error err = { 0 };
	size_t n = 0;

	assert_int_equal(hr_loc_decode(bytes, len, 8, false, ops, 64, &n, &err), HR_OK);
	return hr_loc_eval(ops, n, pieces, max);
}

static void test_call_frame_cfa(void **state)
{
	const uint8_t expr[] = { DW_OP_call_frame_cfa };
	struct hr_loc_piece p[4];

	(void)state;
	assert_int_equal(run(expr, sizeof(expr), p, 4), 1);
	assert_int_equal(p[0].kind, HR_LOC_CFA);
	assert_int_equal(p[0].offset, 0);
}

static void test_cfa_plus_consts(void **state)
{
	/* DW_OP_call_frame_cfa; DW_OP_consts -104; DW_OP_plus */
	const uint8_t expr[] = { DW_OP_call_frame_cfa, DW_OP_consts, 0x98, 0x7f, DW_OP_plus };
	struct hr_loc_piece p[4];

	(void)state;
	assert_int_equal(run(expr, sizeof(expr), p, 4), 1);
	assert_int_equal(p[0].kind, HR_LOC_CFA);
	assert_int_equal(p[0].offset, -104);
}

static void test_fbreg(void **state)
{
	const uint8_t neg[] = { DW_OP_fbreg, 0x98, 0x7f };   /* -104 */
	const uint8_t pos[] = { DW_OP_fbreg, 0x10 };         /* +16 */
	struct hr_loc_piece p[4];

	(void)state;
	assert_int_equal(run(neg, sizeof(neg), p, 4), 1);
	assert_int_equal(p[0].kind, HR_LOC_CFA);
	assert_int_equal(p[0].offset, -104);
	assert_int_equal(run(pos, sizeof(pos), p, 4), 1);
	assert_int_equal(p[0].offset, 16);
}

static void test_plus_uconst(void **state)
{
	const uint8_t expr[] = { DW_OP_call_frame_cfa, DW_OP_plus_uconst, 0x80, 0x01 }; /* +128 */
	struct hr_loc_piece p[4];

	(void)state;
	assert_int_equal(run(expr, sizeof(expr), p, 4), 1);
	assert_int_equal(p[0].kind, HR_LOC_CFA);
	assert_int_equal(p[0].offset, 128);
}

static void test_addr(void **state)
{
	const uint8_t expr[] = { DW_OP_addr, 0x80, 0x98, 0x5c, 0, 0, 0, 0, 0 };
	struct hr_loc_piece p[4];

	(void)state;
	assert_int_equal(run(expr, sizeof(expr), p, 4), 1);
	assert_int_equal(p[0].kind, HR_LOC_ADDR);
	assert_int_equal(p[0].offset, 0x5c9880);
}

static void test_register(void **state)
{
	const uint8_t reg3[] = { DW_OP_reg3 };
	const uint8_t regx[] = { DW_OP_regx, 17 };
	struct hr_loc_piece p[4];

	(void)state;
	assert_int_equal(run(reg3, sizeof(reg3), p, 4), 1);
	assert_int_equal(p[0].kind, HR_LOC_REG);
	assert_int_equal(p[0].reg, 3);
	assert_int_equal(run(regx, sizeof(regx), p, 4), 1);
	assert_int_equal(p[0].kind, HR_LOC_REG);
	assert_int_equal(p[0].reg, 17);
}

static void test_pieces(void **state)
{
	/* a string split over RAX and the frame: reg0 piece 8, cfa+8 piece 8 */
	const uint8_t expr[] = { DW_OP_reg0, DW_OP_piece, 8, DW_OP_call_frame_cfa,
				 DW_OP_plus_uconst, 8, DW_OP_piece, 8 };
	/* an optimised-away first half: piece 8 with nothing before it */
	const uint8_t hole[] = { DW_OP_piece, 8, DW_OP_fbreg, 0x70, DW_OP_piece, 8 };
	struct hr_loc_piece p[4];
	char text[128];

	(void)state;
	assert_int_equal(run(expr, sizeof(expr), p, 4), 2);
	assert_int_equal(p[0].kind, HR_LOC_REG);
	assert_int_equal(p[0].size, 8);
	assert_int_equal(p[1].kind, HR_LOC_CFA);
	assert_int_equal(p[1].offset, 8);
	assert_int_equal(p[1].size, 8);
	hr_loc_format(p, 2, text, sizeof(text));
	assert_string_equal(text, "reg0[8] cfa+8[8]");
	assert_int_equal(run(hole, sizeof(hole), p, 4), 2);
	assert_int_equal(p[0].kind, HR_LOC_NONE);
	assert_int_equal(p[1].kind, HR_LOC_CFA);
	assert_int_equal(p[1].offset, -16);
}

static void test_too_many_pieces(void **state)
{
	uint8_t expr[3 * 10];
	struct hr_loc_piece p[4];

	(void)state;
	for (int i = 0; i < 10; i++) {
		expr[3 * i] = DW_OP_reg1;
		expr[3 * i + 1] = DW_OP_piece;
		expr[3 * i + 2] = 8;
	}
	assert_int_equal(run(expr, sizeof(expr), p, 4), 1);
	assert_int_equal(p[0].kind, HR_LOC_UNSUPPORTED);
}

static void test_stack_value_and_unsupported(void **state)
{
	const uint8_t value[] = { DW_OP_lit7, DW_OP_stack_value };
	const uint8_t deref[] = { DW_OP_call_frame_cfa, DW_OP_deref };
	const uint8_t breg[] = { DW_OP_breg7, 0x08 };
	const uint8_t empty_stack[] = { DW_OP_plus };
	const uint8_t cfa_minus[] = { DW_OP_lit1, DW_OP_call_frame_cfa, DW_OP_minus };
	struct hr_loc_piece p[4];

	(void)state;
	assert_int_equal(run(value, sizeof(value), p, 4), 1);
	assert_int_equal(p[0].kind, HR_LOC_VALUE);
	assert_int_equal(p[0].offset, 7);
	assert_int_equal(run(deref, sizeof(deref), p, 4), 1);
	assert_int_equal(p[0].kind, HR_LOC_UNSUPPORTED);
	assert_int_equal(run(breg, sizeof(breg), p, 4), 1);
	assert_int_equal(p[0].kind, HR_LOC_UNSUPPORTED);
	assert_int_equal(run(empty_stack, sizeof(empty_stack), p, 4), 1);
	assert_int_equal(p[0].kind, HR_LOC_UNSUPPORTED);
	assert_int_equal(run(cfa_minus, sizeof(cfa_minus), p, 4), 1);
	assert_int_equal(p[0].kind, HR_LOC_UNSUPPORTED);
}

static void test_decode_errors(void **state)
{
	const uint8_t truncated_addr[] = { DW_OP_addr, 1, 2, 3 };
	const uint8_t truncated_leb[] = { DW_OP_consts, 0x80, 0x80 };
	const uint8_t unknown[] = { 0xe0 };
	struct hr_loc_op ops[4];
	size_t n = 0;
	struct hr_error err = { 0 };

	(void)state;
	assert_int_equal(hr_loc_decode(truncated_addr, sizeof(truncated_addr), 8, false, ops, 4,
				       &n, &err), HR_EINPUT);
	assert_non_null(strstr(err.msg, "truncated"));
	err = (struct hr_error){ 0 };
	assert_int_equal(hr_loc_decode(truncated_leb, sizeof(truncated_leb), 8, false, ops, 4, &n,
				       &err), HR_EINPUT);
	err = (struct hr_error){ 0 };
	assert_int_equal(hr_loc_decode(unknown, sizeof(unknown), 8, false, ops, 4, &n, &err),
			 HR_EINPUT);
	assert_non_null(strstr(err.msg, "unknown operation 0xe0"));
}

static void test_decode_big_endian_addr4(void **state)
{
	const uint8_t expr[] = { DW_OP_addr, 0x00, 0x12, 0x34, 0x56 };
	struct hr_loc_op ops[2];
	size_t n = 0;
	struct hr_error err = { 0 };

	(void)state;
	assert_int_equal(hr_loc_decode(expr, sizeof(expr), 4, true, ops, 2, &n, &err), HR_OK);
	assert_int_equal(n, 1);
	assert_int_equal(ops[0].n1, 0x123456);
}

/* ---- hr_binary_open on bad files --------------------------------------------------------- */

static char *write_temp(const void *bytes, size_t len)
{
	char *path = strdup("/tmp/heapref-test-binary-XXXXXX");
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, bytes, len), (ssize_t)len);
	close(fd);
	return path;
}

static void expect_open_fails(const void *bytes, size_t len, const char *what)
{
	struct hr_error err = { 0 };
	char *path = write_temp(bytes, len);
	struct hr_binary *bin = hr_binary_open(path, &err);

	assert_null(bin);
	assert_int_equal(err.code, HR_EINPUT);
	assert_non_null(strstr(err.msg, path));
	assert_non_null(strstr(err.msg, what));
	unlink(path);
	free(path);
}

static void test_open_not_elf(void **state)
{
	(void)state;
	expect_open_fails("hello, world\n", 13, "not an ELF file");
	expect_open_fails("", 0, "not an ELF file");
}

static uint8_t *read_self(size_t *len)
{
	FILE *f = fopen("/proc/self/exe", "rb");
	uint8_t *buf;
	long size;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	size = ftell(f);
	assert_true(size > 0);
	rewind(f);
	buf = malloc((size_t)size);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)size, f), (size_t)size);
	fclose(f);
	*len = (size_t)size;
	return buf;
}

/* The test program itself: an ELF with symbols; it may or may not have DWARF. */
static void test_open_self(void **state)
{
	struct hr_error err = { 0 };
	struct hr_binary *bin = hr_binary_open("/proc/self/exe", &err);
	const struct hr_symbol *s;

	(void)state;
	assert_non_null(bin);
	assert_true(hr_binary_has_symbols(bin));
	s = hr_binary_find_symbol(bin, "test_open_self");
	assert_non_null(s);
	assert_ptr_equal(hr_binary_symbol_at(bin, s->addr + 1), s);
	uint64_t addr = s->addr;

	/* an image at a bias: run-time addresses; the binary itself is left as it was */
	struct hr_image im;

	assert_int_equal(hr_image_at(bin, 0x1000, &im, &err), HR_OK);
	assert_ptr_equal(hr_image_symbol_at(&im, addr + 0x1001), s);
	assert_int_equal(hr_image_runtime(&im, s->addr), addr + 0x1000);
	assert_int_equal(hr_binary_find_symbol(bin, "test_open_self")->addr, addr);
	assert_ptr_equal(hr_binary_symbol_at(bin, addr + 1), s);
	/* a bias that would wrap the binary's addresses past 2^64 is refused */
	assert_int_equal(hr_image_at(bin, UINT64_MAX - addr + 1, &im, &err), HR_EINPUT);
	hr_binary_free(bin);
}

/* Truncated and corrupted copies of an ELF must fail cleanly or open, never crash. */
static void test_open_damaged(void **state)
{
	size_t len = 0;
	uint8_t *self = read_self(&len);
	size_t cuts[] = { 4, 16, 63, 64, 200, 4096, len / 3, len / 2, len - 1 };

	(void)state;
	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		struct hr_error err = { 0 };
		char *path = write_temp(self, cuts[i] < len ? cuts[i] : len);
		struct hr_binary *bin = hr_binary_open(path, &err);

		if (!bin)
			assert_true(err.code == HR_EINPUT || err.code == HR_EIO);
		hr_binary_free(bin);
		unlink(path);
		free(path);
	}
	/* scribble over the section header table offset and count */
	for (size_t off = 0x28; off < 0x40; off += 4) {
		struct hr_error err = { 0 };
		uint8_t saved[4];
		char *path;
		struct hr_binary *bin;

		memcpy(saved, self + off, 4);
		memset(self + off, 0xff, 4);
		path = write_temp(self, len);
		bin = hr_binary_open(path, &err);
		hr_binary_free(bin);
		unlink(path);
		free(path);
		memcpy(self + off, saved, 4);
	}
	free(self);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_call_frame_cfa),
		cmocka_unit_test(test_cfa_plus_consts),
		cmocka_unit_test(test_fbreg),
		cmocka_unit_test(test_plus_uconst),
		cmocka_unit_test(test_addr),
		cmocka_unit_test(test_register),
		cmocka_unit_test(test_pieces),
		cmocka_unit_test(test_too_many_pieces),
		cmocka_unit_test(test_stack_value_and_unsupported),
		cmocka_unit_test(test_decode_errors),
		cmocka_unit_test(test_decode_big_endian_addr4),
		cmocka_unit_test(test_open_not_elf),
		cmocka_unit_test(test_open_self),
		cmocka_unit_test(test_open_damaged),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
