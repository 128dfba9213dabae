/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_binary.c - fuzz target: the binary reader (binary.h) on any bytes as an ELF file:
 * its sections, symbols, DWARF types, globals and functions, and each function's
 * variables and their locations, as `heapref types` and `heapref vars` ask for them.
 *
 * hr_binary_open() takes a path, so the input goes to a memfd opened by its
 * /proc/self/fd path. A rejected input must fail with one HR_EINPUT line naming that
 * path. An accepted one must answer its own lookups: a type by its name, a global and
 * a symbol at their addresses, a function at its first PC.
 */
#define _GNU_SOURCE /* memfd_create */
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_target.h"
#include "heapref/binary.h"

/* Bounds on the work per input: a mutated count must not make one run take minutes. */
#define MAX_ITEMS 4096
#define MAX_FUNCS_WITH_VARS 256
#define MAX_VARS_DESCRIBED 64

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

static size_t at_most(size_t n, size_t max)
{
	return n < max ? n : max;
}

static void check_types(const struct hr_binary *bin)
{
	uint32_t n = hr_binary_type_count(bin);

	for (uint32_t id = 0; id < at_most(n, MAX_ITEMS); id++) {
		const struct hr_type *t = hr_binary_type(bin, id);
		uint32_t found;
		uint64_t rt;

		FUZZ_CHECK(t->name, "type %u has no name", id);
		(void)hr_binary_resolve_typedef(bin, id);
		if (t->name[0]) {
			found = hr_binary_find_type(bin, t->name);
			FUZZ_CHECK(found && !strcmp(hr_binary_type(bin, found)->name, t->name),
				   "type %u \"%s\" not found by its name", id, t->name);
		}
		for (uint32_t k = 0; k < t->member_count && k < 256; k++) {
			const struct hr_member *m = hr_binary_member(bin, t->first_member + k);

			FUZZ_CHECK(m && m->name, "member %u of type %u", k, id);
			FUZZ_CHECK(hr_binary_find_member(bin, id, m->name) ||
					   hr_binary_resolve_typedef(bin, id) != id,
				   "member \"%s\" of type %u not found by its name", m->name, id);
		}
		rt = hr_binary_runtime_type_addr(bin, id);
		if (rt)
			FUZZ_CHECK(hr_binary_runtime_type_addr(bin, hr_binary_type_by_runtime_addr(bin, rt)) == rt,
				   "runtime type of type %u", id);
	}
}

/* Globals and symbols, looked up at the run-time addresses of image im. */
static void check_globals_and_symbols(const struct hr_image *im)
{
	const struct hr_binary *bin = im->bin;
	uint8_t buf[64];
	struct hr_error err = { 0 };

	for (size_t i = 0; i < at_most(hr_binary_global_count(bin), MAX_ITEMS); i++) {
		const struct hr_global *g = hr_binary_global(bin, i);

		FUZZ_CHECK(g && g->name, "global %zu", i);
		(void)hr_image_global_at(im, hr_image_runtime(im, g->addr));
		if (i < 256)
			FUZZ_CHECK(hr_binary_find_global(bin, g->name), "global %s by name", g->name);
	}
	for (size_t i = 0; i < at_most(hr_binary_symbol_count(bin), MAX_ITEMS); i++) {
		const struct hr_symbol *s = hr_binary_symbol(bin, i);
		uint64_t at = hr_image_runtime(im, s->addr);

		FUZZ_CHECK(hr_image_symbol_at(im, at), "no symbol at 0x%llx",
			   (unsigned long long)at);
		if (i < 256)
			FUZZ_CHECK(hr_binary_find_symbol(bin, s->name), "symbol %s by name", s->name);
		(void)hr_image_section_at(im, at);
		(void)hr_image_read(im, at, buf, sizeof(buf), &err);
		(void)hr_image_read(im, at, buf, 1, &err);
	}
}

/* A function's variables at its first PC and in its middle, and their locations. */
static void check_func_vars(const struct hr_image *im, size_t i, struct hr_frame_vars *fv)
{
	const struct hr_binary *bin = im->bin;
	const struct hr_func *f = hr_binary_func(bin, i);
	uint64_t low = hr_image_runtime(im, f->low_pc);
	uint64_t pcs[2] = { low, low + (f->high_pc - f->low_pc) / 2 };
	struct hr_error err = { 0 };
	char buf[512];
	size_t count = 0;

	for (int k = 0; k < 2; k++) {
		if (hr_image_func_vars(im, i, pcs[k], fv, &err)) {
			FUZZ_CHECK(err.code != HR_ENOMEM, "%s", err.msg);
			return;
		}
		for (size_t v = 0; v < fv->count; v++) {
			const struct hr_var *var = &fv->vars[v];

			FUZZ_CHECK(var->name && (uint64_t)var->first_piece + var->piece_count <=
							fv->piece_count,
				   "variable %zu of function %zu", v, i);
			hr_loc_format(&fv->pieces[var->first_piece], var->piece_count, buf,
				      sizeof(buf));
		}
	}
	if (hr_binary_func_var_count(bin, i, &count, &err))
		return;
	for (size_t v = 0; v < at_most(count, MAX_VARS_DESCRIBED); v++)
		(void)hr_image_describe_var(im, i, v, buf, sizeof(buf), &err);
}

static void check_funcs(const struct hr_image *im)
{
	const struct hr_binary *bin = im->bin;
	struct hr_frame_vars fv = { 0 };
	size_t n = hr_binary_func_count(bin);

	for (size_t i = 0; i < at_most(n, MAX_ITEMS); i++) {
		const struct hr_func *f = hr_binary_func(bin, i);

		if (f->low_pc < f->high_pc)
			FUZZ_CHECK(hr_image_func_at(im, hr_image_runtime(im, f->low_pc)) >= 0,
				   "function %s at its low PC", f->name);
	}
	for (size_t i = 0; i < at_most(n, MAX_FUNCS_WITH_VARS); i++)
		check_func_vars(im, i, &fv);
	hr_frame_vars_release(&fv);
}

/* Writes the input to a memfd; its /proc/self/fd path into path. -1 on failure. */
static int input_file(const uint8_t *data, size_t size, char *path, size_t len)
{
	int fd = memfd_create("fuzz-elf", MFD_CLOEXEC);
	size_t done = 0;

	FUZZ_CHECK(fd >= 0, "memfd_create failed");
	while (done < size) {
		ssize_t n = write(fd, data + done, size - done);

		FUZZ_CHECK(n > 0, "cannot write the memfd");
		done += (size_t)n;
	}
	snprintf(path, len, "/proc/self/fd/%d", fd);
	return fd;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hr_error err = { 0 };
	struct hr_binary *bin;
	struct hr_image im;
	char path[64];
	int fd = input_file(data, size, path, sizeof(path));

	bin = hr_binary_open(path, &err);
	close(fd);
	if (!bin) {
		FUZZ_CHECK_ERROR(&err, HR_EINPUT, path);
		return 0;
	}
	(void)hr_binary_limits(bin);
	check_types(bin);
	im = (struct hr_image){ bin, 0 };
	check_globals_and_symbols(&im);
	check_funcs(&im);
	if (hr_image_from_data(bin, 0x7f0000000000, &im, &err) == 0) {
		check_globals_and_symbols(&im); /* every address moved */
		check_funcs(&im);
	}
	hr_binary_free(bin);
	return 0;
}
