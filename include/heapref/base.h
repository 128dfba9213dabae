/* SPDX-License-Identifier: Apache-2.0 */
/*
 * base.h - what every pipeline stage shares: the error report, growable arrays,
 * overflow-checked size arithmetic and bit-vector helpers.
 *
 * Conventions (see docs/design.md):
 *   - functions return 0 on success or a negative HR_E* code; constructors return
 *     NULL on failure. Either way the reason is written to a struct hr_error.
 *   - an error is one line of text; for bad input it names the file, the byte
 *     offset and the fault: "dump.hprof: byte 1234: truncated object record".
 *   - nothing below main() exits the process or prints.
 */
#ifndef HEAPREF_BASE_H
#define HEAPREF_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum hr_status {
	HR_OK = 0,
	HR_EINPUT = -1,  /* the input is not what it claims to be (bad dump, bad ELF) */
	HR_EIO = -2,     /* cannot open, map or read a file */
	HR_ENOMEM = -3,  /* out of memory */
	HR_EUSAGE = -4,  /* the caller asked for something impossible */
	HR_EOUTPUT = -5, /* an output cannot be created or written (disk full, refused path) */
	HR_EMISMATCH = -6, /* the heap input was not written by the binary given with it */
};

/* Room for two paths and a why of HR_ERROR_MAX / 2 (what a check that fails says). */
#define HR_ERROR_MAX 1024

struct hr_error {
	int code;               /* one of enum hr_status; HR_OK until something fails */
	char msg[HR_ERROR_MAX]; /* one line, no trailing newline */
};

#if defined(__GNUC__)
#define HR_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define HR_PRINTF(fmt, args)
#endif

/*
 * Records the first failure only: later calls keep the original message. Returns code.
 * Control characters in the message (a hostile input's names may hold newlines or
 * terminal escapes) become '?': the message stays one line.
 */
int hr_error_set(struct hr_error *err, int code, const char *fmt, ...) HR_PRINTF(3, 4);

/* Checked size arithmetic: false on overflow, *out untouched then. */
static inline bool hr_add_ok(uint64_t a, uint64_t b, uint64_t *out)
{
	if (a > UINT64_MAX - b)
		return false;
	*out = a + b;
	return true;
}

static inline bool hr_mul_ok(uint64_t a, uint64_t b, uint64_t *out)
{
	if (a != 0 && b > UINT64_MAX / a)
		return false;
	*out = a * b;
	return true;
}

/*
 * Grows *items (of elem_size bytes each, capacity *cap) so that it holds at least
 * need elements; doubles to keep appends amortised O(1). Returns 0 or HR_ENOMEM.
 */
int hr_array_reserve(void **items, size_t *cap, size_t need, size_t elem_size);

/*
 * Appends one zeroed element to *items (*n in use, capacity *cap) and returns it,
 * or NULL when out of memory. Pointers into the array are invalidated by the next push.
 */
void *hr_array_push(void **items, size_t *n, size_t *cap, size_t elem_size);

/*
 * calloc(n, size) for an array that is read at random before it is written (a visited
 * bit, a number slot), its pages faulted in by writes at once. Left to the first reads,
 * each page would map the kernel's shared zero page, then fault again at its first
 * write and flush the TLB of every other processor running a thread of heapref (an
 * interrupt each): 3.7% of all the CPU time of `suspects` on the 4 GiB generated heap,
 * for the dominator tree's numbers alone. (Not as huge pages: asked for with madvise(),
 * they cost the kernel's compaction, and that search was slower.) Free it with free().
 */
void *hr_calloc_faulted(size_t n, size_t size);

/*
 * Sorts n 64-bit keys ascending: a radix sort, linear where qsort() is n log n (some
 * millions of edges), with a buffer as large as v while it runs. 0 or HR_ENOMEM (v
 * untouched then).
 */
int hr_sort_u64(uint64_t *v, size_t n);

/*
 * For an array of n entries, stride bytes apart, sorted ascending by a uint64_t key at
 * key_offset inside each entry: how many entries have key <= x. The entry at the count
 * minus one is then the last one starting at or before x (an address lookup).
 */
size_t hr_count_key_at_most(const void *items, size_t n, size_t stride, size_t key_offset,
			    uint64_t x);

/* Bit vectors stored in uint64_t words, bit i in word i/64 (little-endian bit order). */
static inline bool hr_bit_get(const uint64_t *bits, uint64_t i)
{
	return (bits[i >> 6] >> (i & 63)) & 1;
}

static inline void hr_bit_set(uint64_t *bits, uint64_t i)
{
	bits[i >> 6] |= UINT64_C(1) << (i & 63);
}

static inline void hr_bit_clear(uint64_t *bits, uint64_t i)
{
	bits[i >> 6] &= ~(UINT64_C(1) << (i & 63));
}

static inline uint64_t hr_bit_words(uint64_t nbits)
{
	return (nbits + 63) / 64;
}

/* Index of the first set bit in [from, limit), or limit if none. */
uint64_t hr_bit_next(const uint64_t *bits, uint64_t from, uint64_t limit);

/*
 * Opens path for reading without ever blocking in open() (a FIFO with no writer, a
 * device), and only if it is a regular file: anything else fails with one line
 * "NAME: is a directory, not WHAT" (or a FIFO, a device, a socket) and code. name is
 * what messages call the file (NULL: path). Returns the descriptor (blocking again,
 * close-on-exec), or -1 with err set (HR_EIO when it cannot be opened or read).
 */
int hr_open_regular(const char *path, const char *name, const char *what, int code,
		    struct hr_error *err);

/*
 * Processors this process may run on (its affinity mask, so `taskset -c 0` gives 1): the
 * stages that can use a second thread start one only if this is 2 or more.
 */
unsigned hr_cpus_usable(void);

#endif
