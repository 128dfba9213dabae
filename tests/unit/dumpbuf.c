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
	db_uvarint(b, 6);
	db_bool(b, 0);
	db_uvarint(b, 8);
	db_uvarint(b, heap_start);
	db_uvarint(b, heap_end);
	db_string(b, "amd64");
	db_string(b, "go1.26.8");
	db_uvarint(b, 2);
}

void db_object(struct dumpbuf *b, uint64_t addr, size_t size, uint8_t fill,
	       const uint64_t *ptr_offsets, size_t nptrs)
{
	uint8_t *mem = malloc(size ? size : 1);

	if (!mem)
		abort();
	memset(mem, fill, size);
	db_uvarint(b, 1);
	db_uvarint(b, addr);
	db_mem(b, mem, size);
	db_fields(b, ptr_offsets, nptrs);
	free(mem);
}

void db_eof(struct dumpbuf *b)
{
	db_uvarint(b, 0);
}
