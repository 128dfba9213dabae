/* SPDX-License-Identifier: Apache-2.0 */
/* dumpbuf.c - hand-made heap dumps for the unit tests (see dumpbuf.h). */
#include <stdlib.h>
#include <string.h>

#include "dumpbuf.h"

void dumpbuf_release(struct dumpbuf *b)
{
	free(b->bytes);
	memset(b, 0, sizeof(*b));
}

void db_raw(struct dumpbuf *b, const void *p, size_t n)
{
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 256;

		while (cap < b->len + n)
			cap *= 2;
		b->bytes = realloc(b->bytes, cap);
		if (!b->bytes)
			abort();
		b->cap = cap;
	}
	if (n)
		memcpy(b->bytes + b->len, p, n);
	b->len += n;
}

void db_uvarint(struct dumpbuf *b, uint64_t v)
{
	uint8_t buf[10];
	size_t n = 0;

	while (v >= 0x80) {
		buf[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	buf[n++] = (uint8_t)v;
	db_raw(b, buf, n);
}

void db_bool(struct dumpbuf *b, int v)
{
	db_uvarint(b, v ? 1 : 0);
}

void db_mem(struct dumpbuf *b, const void *p, size_t n)
{
	db_uvarint(b, n);
	db_raw(b, p, n);
}

void db_string(struct dumpbuf *b, const char *s)
{
	db_mem(b, s, strlen(s));
}

void db_fields(struct dumpbuf *b, const uint64_t *offsets, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		db_uvarint(b, 1);
		db_uvarint(b, offsets[i]);
	}
	db_uvarint(b, 0);
}

void db_header(struct dumpbuf *b)
{
	db_raw(b, "go1.7 heap dump\n", 16);
}

void db_params(struct dumpbuf *b, uint64_t heap_start, uint64_t heap_end)
{
	db_params_version(b, heap_start, heap_end, "go1.26.8");
}

void db_params_version(struct dumpbuf *b, uint64_t heap_start, uint64_t heap_end,
		       const char *go_version)
{
	db_uvarint(b, 6);
	db_bool(b, 0);
	db_uvarint(b, 8);
	db_uvarint(b, heap_start);
	db_uvarint(b, heap_end);
	db_string(b, "amd64");
	db_string(b, go_version);
	db_uvarint(b, 2);
}

void db_object(struct dumpbuf *b, uint64_t addr, size_t size, uint8_t fill,
	       const uint64_t *ptr_offsets, size_t nptrs)
{
	uint8_t *mem = malloc(size ? size : 1);

	if (!mem)
		abort();
	memset(mem, fill, size);
	db_object_mem(b, addr, mem, size, ptr_offsets, nptrs);
	free(mem);
}

void db_object_mem(struct dumpbuf *b, uint64_t addr, const void *mem, size_t size,
		   const uint64_t *ptr_offsets, size_t nptrs)
{
	db_uvarint(b, 1);
	db_uvarint(b, addr);
	db_mem(b, mem, size);
	db_fields(b, ptr_offsets, nptrs);
}

void db_segment(struct dumpbuf *b, unsigned kind, uint64_t addr, const void *mem, size_t size,
		const uint64_t *ptr_offsets, size_t nptrs)
{
	db_uvarint(b, kind);
	db_uvarint(b, addr);
	db_mem(b, mem, size);
	db_fields(b, ptr_offsets, nptrs);
}

void db_itab(struct dumpbuf *b, uint64_t addr, uint64_t type_addr)
{
	db_uvarint(b, 8);
	db_uvarint(b, addr);
	db_uvarint(b, type_addr);
}

void db_goroutine(struct dumpbuf *b, uint64_t addr, uint64_t sp, uint64_t goid, uint64_t gopc,
		  uint64_t status, const char *wait_reason)
{
	db_uvarint(b, 4);
	db_uvarint(b, addr);
	db_uvarint(b, sp);
	db_uvarint(b, goid);
	db_uvarint(b, gopc);
	db_uvarint(b, status);
	db_bool(b, 0); /* system */
	db_bool(b, 0); /* background */
	db_uvarint(b, 0); /* waiting since */
	db_string(b, wait_reason);
	for (int i = 0; i < 4; i++) /* context, thread, defer, panic */
		db_uvarint(b, 0);
}

void db_frame(struct dumpbuf *b, uint64_t sp, uint64_t depth, uint64_t child_sp,
	      const void *mem, size_t size, uint64_t entry_pc, uint64_t pc, const char *func,
	      const uint64_t *ptr_offsets, size_t nptrs)
{
	db_uvarint(b, 5);
	db_uvarint(b, sp);
	db_uvarint(b, depth);
	db_uvarint(b, child_sp);
	db_mem(b, mem, size);
	db_uvarint(b, entry_pc);
	db_uvarint(b, pc);
	db_uvarint(b, pc);
	db_string(b, func);
	db_fields(b, ptr_offsets, nptrs);
}

void db_eof(struct dumpbuf *b)
{
	db_uvarint(b, 0);
}
