/* SPDX-License-Identifier: Apache-2.0 */
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

/* Whole records, with their kind. Pointer offsets (ptr_offsets, nptrs) are in bytes. */
void db_header(struct dumpbuf *b);
/* 8-byte little-endian amd64 params of a dump written by go1.26.8. */
void db_params(struct dumpbuf *b, uint64_t heap_start, uint64_t heap_end);
/* The same, written by go_version ("go1.23.12"). */
void db_params_version(struct dumpbuf *b, uint64_t heap_start, uint64_t heap_end,
		       const char *go_version);
/* An object whose contents are `size` bytes of `fill`. */
void db_object(struct dumpbuf *b, uint64_t addr, size_t size, uint8_t fill,
	       const uint64_t *ptr_offsets, size_t nptrs);
/* An object whose contents are mem[0..size). */
void db_object_mem(struct dumpbuf *b, uint64_t addr, const void *mem, size_t size,
		   const uint64_t *ptr_offsets, size_t nptrs);
/* The data segment (DB_DATA) or the bss segment (DB_BSS) at addr: mem[0..size). */
enum { DB_DATA = 12, DB_BSS = 13 };
void db_segment(struct dumpbuf *b, unsigned kind, uint64_t addr, const void *mem, size_t size,
		const uint64_t *ptr_offsets, size_t nptrs);
/* An itab record: the itab at addr is for the type at type_addr. */
void db_itab(struct dumpbuf *b, uint64_t addr, uint64_t type_addr);
/*
 * A goroutine record (not a system or background goroutine; no context, thread, defer
 * or panic); the stack frame records after it, until the next goroutine, are its.
 */
void db_goroutine(struct dumpbuf *b, uint64_t addr, uint64_t sp, uint64_t goid, uint64_t gopc,
		  uint64_t status, const char *wait_reason);
/* A stack frame record: mem[0..size) at sp, running func at pc (continuation pc too). */
void db_frame(struct dumpbuf *b, uint64_t sp, uint64_t depth, uint64_t child_sp,
	      const void *mem, size_t size, uint64_t entry_pc, uint64_t pc, const char *func,
	      const uint64_t *ptr_offsets, size_t nptrs);
void db_eof(struct dumpbuf *b);

#endif
