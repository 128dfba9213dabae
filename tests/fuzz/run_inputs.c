/* SPDX-License-Identifier: Apache-2.0 */
/*
 * run_inputs.c - runs a fuzz target on files, without libFuzzer: how the seed corpus
 * and the regression inputs run in the normal test suite.
 *
 *   fuzz_dump_inputs FILE|DIR...    each file, or each file of each directory (sorted,
 *                                   dot files skipped); one "ok NAME" line per input
 *
 * Each input gets HEAPREF_FUZZ_TIMEOUT seconds (default 60) before the run fails as a
 * hang. Allocations are limited (see limit_memory()) so that one sized by a length field
 * fails, and the target reports the HR_ENOMEM it causes.
 */
#define _DEFAULT_SOURCE /* DT_REG, scandir */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz_target.h"

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

#ifdef UNDER_ASAN
/*
 * ASan reserves terabytes of shadow: no address-space limit, a per-allocation one. Full
 * allocation stacks, for the suppression below (libdwarf has no frame pointers).
 */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "allocator_may_return_null=1:max_allocation_size_mb=1024:fast_unwind_on_malloc=0";
}

/* The leak inside libdwarf that tests/fuzz/lsan.supp explains. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:_dwarf_fill_in_locdesc_op_c\n";
}

static void limit_memory(void)
{
}
#else
/* Without ASan: 2 GiB of address space, some 20 times what the largest input needs. */
static void limit_memory(void)
{
	struct rlimit rl = { (rlim_t)2 << 30, (rlim_t)2 << 30 };

	if (setrlimit(RLIMIT_AS, &rl))
		perror("run_inputs: setrlimit");
}
#endif

/* The input being run, for the hang message (a signal handler can only see globals). */
static const char *volatile current_input = "";

static void on_alarm(int sig)
{
	const char *msg = "run_inputs: hang: no result after the time limit on ";

	(void)sig;
	if (write(STDERR_FILENO, msg, strlen(msg)) < 0 ||
	    write(STDERR_FILENO, current_input, strlen(current_input)) < 0 ||
	    write(STDERR_FILENO, "\n", 1) < 0)
		_exit(3);
	_exit(3);
}

static unsigned input_timeout(void)
{
	const char *s = getenv("HEAPREF_FUZZ_TIMEOUT");
	long v = s ? strtol(s, NULL, 10) : 0;

	return v > 0 ? (unsigned)v : 60;
}

/* Reads the whole file into a buffer of exactly its size (so ASan sees over-reads). */
static uint8_t *read_input(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	struct stat st;
	uint8_t *buf;

	if (!f || fstat(fileno(f), &st) || st.st_size < 0) {
		fprintf(stderr, "run_inputs: %s: %s\n", path, strerror(errno));
		if (f)
			fclose(f);
		return NULL;
	}
	*len = (size_t)st.st_size;
	buf = malloc(*len ? *len : 1);
	if (!buf || fread(buf, 1, *len, f) != *len) {
		fprintf(stderr, "run_inputs: %s: cannot read\n", path);
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

static int run_file(const char *path)
{
	size_t len = 0;
	uint8_t *buf = read_input(path, &len);

	if (!buf)
		return -1;
	current_input = path;
	alarm(input_timeout());
	LLVMFuzzerTestOneInput(buf, len);
	alarm(0);
	free(buf);
	printf("ok %s (%zu bytes)\n", path, len);
	fflush(stdout);
	return 0;
}

static int skip_dot(const struct dirent *e)
{
	return e->d_name[0] != '.';
}

/* Runs every file of dir; returns how many ran, or -1. */
static long run_dir(const char *dir)
{
	struct dirent **names;
	int n = scandir(dir, &names, skip_dot, alphasort);
	long ran = 0;

	if (n < 0) {
		fprintf(stderr, "run_inputs: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	for (int i = 0; i < n; i++) {
		size_t len = strlen(dir) + strlen(names[i]->d_name) + 2;
		char *path = malloc(len);
		struct stat st;

		if (path) {
			snprintf(path, len, "%s/%s", dir, names[i]->d_name);
			if (!stat(path, &st) && S_ISREG(st.st_mode)) {
				if (run_file(path))
					ran = -1;
				else if (ran >= 0)
					ran++;
			}
		} else {
			ran = -1;
		}
		free(path);
		free(names[i]);
	}
	free(names);
	return ran;
}

int main(int argc, char **argv)
{
	long total = 0;
	struct stat st;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
		return 2;
	}
	limit_memory();
	signal(SIGALRM, on_alarm);
	LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++) {
		long ran;

		if (stat(argv[i], &st)) {
			fprintf(stderr, "run_inputs: %s: %s\n", argv[i], strerror(errno));
			return 1;
		}
		ran = S_ISDIR(st.st_mode) ? run_dir(argv[i]) : run_file(argv[i]) ? -1 : 1;
		if (ran < 0)
			return 1;
		total += ran;
	}
	if (total == 0) {
		fprintf(stderr, "run_inputs: no inputs found\n");
		return 1;
	}
	printf("%ld inputs, no failure\n", total);
	return 0;
}
