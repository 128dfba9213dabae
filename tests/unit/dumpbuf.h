/*
 * dumpbuf.h - builds heap dump byte sequences by hand for the unit tests, one
 * primitive at a time, in the format's own terms (uvarint, string, bool, field list).
 */
#ifndef HEAPREF_TEST_DUMPBUF_H
#define HEAPREF_TEST_DUMPBUF_H

#include <stddef.h>
#include <stdint.h>

struct dumpbuf {
	uint8_t *bytes;
	size_t len;
	size_t cap;
};

void dumpbuf_release(struct dumpbuf *b);
void db_raw(struct dumpbuf *b, const void *p, size_t n);
void db_uvarint(struct dumpbuf *b, uint64_t v);
void db_bool(struct dumpbuf *b, int v);
void db_string(struct dumpbuf *b, const char *s);
void db_mem(struct dumpbuf *b, const void *p, size_t n);
/* Field list: `n` pointer offsets, then the end marker. */
void db_fields(struct dumpbuf *b, const uint64_t *offsets, size_t n);

/* Whole records, with their kind. */
void db_header(struct dumpbuf *b);
void db_params(struct dumpbuf *b, uint64_t heap_start, uint64_t heap_end);
/* An object whose contents are `size` bytes of `fill`. */
void db_object(struct dumpbuf *b, uint64_t addr, size_t size, uint8_t fill,
	       const uint64_t *ptr_offsets, size_t nptrs);
void db_eof(struct dumpbuf *b);

#endif
