/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_target.h - what every fuzz target defines and the check it uses.
 *
 * A target is one file with LLVMFuzzerInitialize() and LLVMFuzzerTestOneInput().
 * Linked with libFuzzer (-fsanitize=fuzzer, option HEAPREF_FUZZ) it fuzzes; linked
 * with run_inputs.c it is a plain program that runs the files named on its command
 * line: the seed corpus and the regression inputs, under ctest.
 */
#ifndef HEAPREF_FUZZ_TARGET_H
#define HEAPREF_FUZZ_TARGET_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * A property heapref must keep on any input. Failing one is a bug: it aborts, which
 * libFuzzer and ctest both report with the input.
 */
#define FUZZ_CHECK(cond, ...)                                                          \
	do {                                                                           \
		if (!(cond)) {                                                         \
			fprintf(stderr, "fuzz check failed at %s:%d: %s: ", __FILE__,  \
				__LINE__, #cond);                                      \
			fprintf(stderr, __VA_ARGS__);                                  \
			fputc('\n', stderr);                                           \
			abort();                                                       \
		}                                                                      \
	} while (0)

/*
 * Inputs are at most a few megabytes, so running out of memory on one means an
 * allocation sized by a length field rather than by the input: a bug. The drivers
 * make such an allocation fail (libFuzzer's -malloc_limit_mb, run_inputs.c's limits),
 * and the targets turn the HR_ENOMEM it causes into a failed check.
 */
#define FUZZ_CHECK_ERROR(err, expected_code, name)                                     \
	do {                                                                           \
		FUZZ_CHECK((err)->code == (expected_code), "code %d, want %d: %s",     \
			   (err)->code, (expected_code), (err)->msg);                  \
		FUZZ_CHECK(!strncmp((err)->msg, (name), strlen(name)) &&               \
				   !strchr((err)->msg, '\n'),                           \
			   "the error is not one line naming the file: %s", (err)->msg); \
	} while (0)

#ifdef HEAPREF_BINARY_H
/*
 * The fixed binary of the targets that read its dumps or cores, named by
 * HEAPREF_FUZZ_BINARY (scripts/fuzz.sh and ctest set it); exits 2 without it.
 */
static inline struct hr_binary *fuzz_fixed_binary(const char *target)
{
	const char *path = getenv("HEAPREF_FUZZ_BINARY");
	struct hr_error err = { 0 };
	struct hr_binary *bin;

	if (!path || !path[0]) {
		fprintf(stderr, "%s: set HEAPREF_FUZZ_BINARY to the binary the seeds come from "
				"(scripts/fuzz.sh does)\n", target);
		exit(2);
	}
	if (!(bin = hr_binary_open(path, &err))) {
		fprintf(stderr, "%s: %s\n", target, err.msg);
		exit(2);
	}
	return bin;
}
#endif

#endif
