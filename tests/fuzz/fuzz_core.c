/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_core.c - fuzz target: the core reader (hr_core_open_bytes()) on any core file,
 * with one fixed binary, the seed program (HEAPREF_FUZZ_BINARY, opened once), then
 * the model it builds through the lookups every later stage uses and the `heapref info`
 * writer (to /dev/null).
 *
 * A rejected core fails with one line naming it: HR_EMISMATCH when its Go build ID or
 * entry point is not the binary's (a core of another binary), else HR_EINPUT. An
 * accepted one has objects sorted by address that do not overlap, each found at its
 * first and last byte, and frames whose contents end where the next frame of their
 * goroutine starts or below it.
 */
#include <string.h>

#include "heapref/binary.h"
#include "fuzz_target.h"
#include "heapref/core.h"
#include "heapref/dump.h"
#include "heapref/writers.h"

#define NAME "fuzz.core"

static struct hr_binary *fixed_binary; /* opened once, never freed */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fixed_binary = fuzz_fixed_binary("fuzz_core");
	return 0;
}

static void check_objects(const struct hr_dump *d)
{
	uint64_t end = 0;

	for (size_t i = 0; i < hr_dump_object_count(d); i++) {
		struct hr_object o = hr_dump_object(d, i);

		FUZZ_CHECK(o.size && o.addr >= end, "object %zu at 0x%llx overlaps the one before", i,
			   (unsigned long long)o.addr);
		FUZZ_CHECK(hr_dump_object_at(d, o.addr) == (int64_t)i &&
				   hr_dump_object_at(d, o.addr + o.size - 1) == (int64_t)i,
			   "object %zu not found at its first and last byte", i);
		end = o.addr + o.size;
	}
}

static void check_frames(const struct hr_dump *d)
{
	size_t ng, nf;
	const struct hr_goroutine *g = hr_dump_goroutines(d, &ng);
	const struct hr_frame *f = hr_dump_frames(d, &nf);

	for (size_t i = 0; i < ng; i++)
		for (uint32_t k = 1; k < g[i].frame_count; k++) {
			const struct hr_frame *a = &f[g[i].first_frame + k - 1], *b = a + 1;

			FUZZ_CHECK(a->sp + a->contents.len <= b->sp && b->depth == a->depth + 1,
				   "frames %u and %u of goroutine %zu out of order", k - 1, k, i);
		}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hr_error err = { 0 };
	struct hr_dump *d;
	FILE *null;

	d = hr_core_open_bytes(data, size, NAME, fixed_binary, &err);
	if (!d) {
		FUZZ_CHECK_ERROR(&err, err.code == HR_EMISMATCH ? HR_EMISMATCH : HR_EINPUT, NAME);
		return 0;
	}
	check_objects(d);
	check_frames(d);
	null = fopen("/dev/null", "w");
	FUZZ_CHECK(null, "cannot open /dev/null");
	FUZZ_CHECK(hr_write_dump_info(null, d, &err) == HR_OK, "info: %s", err.msg);
	fclose(null);
	hr_dump_free(d);
	return 0;
}
