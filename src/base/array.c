/* SPDX-License-Identifier: Apache-2.0 */
/* array.c - growable arrays and bit-vector scanning (see base.h). */
#include <stdlib.h>
#include <string.h>

#include "heapref/base.h"

int hr_sort_u64(uint64_t *v, size_t n)
{
	enum { BITS = 11, DIGITS = 1 << BITS }; /* 6 passes at most; a 16 KiB count */
	uint64_t *tmp, *from = v, *to;
	size_t count[DIGITS];

	if (n < 2)
		return HR_OK;
	if (!(tmp = malloc(n * sizeof(*tmp))))
		return HR_ENOMEM;
	to = tmp;
	for (unsigned shift = 0; shift < 64; shift += BITS) {
		uint64_t *swap;
		size_t sum = 0;

		memset(count, 0, sizeof(count));
		for (size_t i = 0; i < n; i++)
			count[from[i] >> shift & (DIGITS - 1)]++;
		if (count[from[0] >> shift & (DIGITS - 1)] == n)
			continue; /* one digit for all: the pass would change nothing */
		for (size_t d = 0; d < DIGITS; d++) {
			size_t c = count[d];

			count[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			to[count[from[i] >> shift & (DIGITS - 1)]++] = from[i];
		swap = from;
		from = to;
		to = swap;
	}
	if (from != v)
		memcpy(v, from, n * sizeof(*v));
	free(tmp);
	return HR_OK;
}

#define FAULT_STRIDE 4096 /* a page; the system's smallest, or a part of it */

void *hr_calloc_faulted(size_t n, size_t size)
{
	volatile uint8_t *p = calloc(n, size);
	size_t bytes = n * size; /* calloc() checked the product */

	for (size_t at = 0; p && at < bytes; at += FAULT_STRIDE)
		p[at] = 0; /* zero already: the write only faults the page in */
	return (void *)p;
}

int hr_array_reserve(void **items, size_t *cap, size_t need, size_t elem_size)
{
	size_t new_cap;
	uint64_t bytes;
	void *grown;

	if (need <= *cap)
		return HR_OK;
	new_cap = *cap ? *cap : 16;
	while (new_cap < need) {
		if (new_cap > SIZE_MAX / 2)
			return HR_ENOMEM;
		new_cap *= 2;
	}
	if (!hr_mul_ok(new_cap, elem_size, &bytes) || bytes > SIZE_MAX)
		return HR_ENOMEM;
	grown = realloc(*items, (size_t)bytes);
	if (!grown)
		return HR_ENOMEM;
	*items = grown;
	*cap = new_cap;
	return HR_OK;
}

size_t hr_count_key_at_most(const void *items, size_t n, size_t stride, size_t key_offset,
			    uint64_t x)
{
	const unsigned char *base = items;
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t key;

		memcpy(&key, base + mid * stride + key_offset, sizeof(key));
		if (key <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

uint64_t hr_bit_next(const uint64_t *bits, uint64_t from, uint64_t limit)
{
	uint64_t word, i = from;

	while (i < limit) {
		word = bits[i >> 6] >> (i & 63);
		if (word) {
			i += (uint64_t)__builtin_ctzll(word);
			return i < limit ? i : limit;
		}
		i = (i | 63) + 1; /* the rest of this word is clear */
	}
	return limit;
}

void *hr_array_push(void **items, size_t *n, size_t *cap, size_t elem_size)
{
	unsigned char *slot;

	if (*n == SIZE_MAX || hr_array_reserve(items, cap, *n + 1, elem_size) != HR_OK)
		return NULL;
	slot = (unsigned char *)*items + *n * elem_size;
	memset(slot, 0, elem_size);
	(*n)++;
	return slot;
}
