/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dump_cursor.h - reading a heap dump's primitives (uvarints, bools, strings) off the
 * mapping, with every read bounded by the end of the file and every failure naming
 * the file and byte offset. Shared by the parsers of each dump format: dump_reader.c
 * (go1.5 to go1.7), dump_legacy.c (go1.3 and go1.4) and dump_prerelease.c (the
 * pre-release go1.3 layout).
 */
#ifndef HEAPREF_DUMP_CURSOR_H
#define HEAPREF_DUMP_CURSOR_H

#include <string.h>

#include "dump_internal.h"

struct half;
struct legacy;
struct prerelease;

struct cursor {
	struct hr_dump *d;
	const uint8_t *pos;
	const uint8_t *end;
	const uint8_t *rec; /* start of the record being read, NULL for the header */
	unsigned kind;
	struct hr_error *err;
	struct heap_index *heap; /* where object records go */
	struct half *half;       /* the second half, read by another thread; or NULL */
	const uint8_t *half_start; /* where it starts: a copy, read every record, of a field
				    * whose cache line the other thread writes all the time */
	bool steal_open;         /* the other thread may take on part of what this one reads */
	struct legacy *legacy;   /* go1.3 and go1.4 dumps: what their records need; or NULL */
	struct prerelease *pre;  /* the pre-release go1.3 layout: frames and roots to link */
	uint64_t nrecords;
};

static inline uint64_t cur_offset(const struct cursor *c, const uint8_t *p)
{
	return (uint64_t)(p - c->d->map);
}

/* Reports bad input at byte `at`: "FILE: byte N: what (in the KIND record at byte M)". */
int cur_fail(struct cursor *c, const uint8_t *at, const char *fmt, ...) HR_PRINTF(3, 4);
int cur_nomem(struct cursor *c);
/*
 * A length field at `at` claims more bytes than the file has left: a dump cut short,
 * said so ("truncated: the object record at byte M needs 32768 bytes of contents, 8625
 * are left"), as the record's start is where a reader looks first.
 */
int cur_short(struct cursor *c, const uint8_t *at, uint64_t len, const char *what);

int cur_uvarint_slow(struct cursor *c, uint64_t *v, const char *what);

/*
 * The uvarint of 2 to 8 bytes whose first 8 bytes are w (little-endian) and whose last
 * byte is the first byte of w with its high bit clear (ends: that byte's high bit, set;
 * nonzero): its value, the 7 bits of each byte put together without a loop. A dump's
 * addresses are 6-byte uvarints; byte by byte, each took about 50 instructions.
 */
static inline uint64_t cur_uvarint_word(uint64_t w, uint64_t ends)
{
	uint64_t x = w & 0x7f7f7f7f7f7f7f7fu & (ends ^ (ends - 1)); /* its bytes, 7 bits each */

	x = (x & 0x007f007f007f007fu) | (x & 0x7f007f007f007f00u) >> 1; /* 14 bits per 16 */
	x = (x & 0x00003fff00003fffu) | (x & 0x3fff00003fff0000u) >> 2; /* 28 per 32 */
	return (x & 0x000000000fffffffu) | (x & 0x0fffffff00000000u) >> 4;
}

/* Reads a uvarint (encoding/binary's), naming it `what` in errors. */
static inline int cur_uvarint(struct cursor *c, uint64_t *v, const char *what)
{
	const uint8_t *p = c->pos;

	if (c->end - p >= 10) { /* no bounds check per byte; 10 bytes is the longest */
		if (p[0] < 0x80) { /* most of them: field kinds and offsets, lengths */
			c->pos = p + 1;
			*v = p[0];
			return HR_OK;
		}
		if (p[1] < 0x80) { /* lengths of up to 16 KiB */
			c->pos = p + 2;
			*v = (p[0] & 0x7fu) | (uint64_t)p[1] << 7;
			return HR_OK;
		}
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		uint64_t w, ends;

		memcpy(&w, p, sizeof(w));
		ends = ~w & 0x8080808080808080u;
		if (ends) {
			c->pos = p + (__builtin_ctzll(ends) >> 3) + 1;
			*v = cur_uvarint_word(w, ends);
			return HR_OK;
		}
#endif
	}
	return cur_uvarint_slow(c, v, what);
}

int cur_bool(struct cursor *c, bool *v, const char *what);
/* A uvarint length and that many bytes, which must be in the file. */
int cur_bytes(struct cursor *c, struct hr_bytes *out, const char *what);
/* Reads count uvarints into vals. */
int cur_uvarints(struct cursor *c, uint64_t *vals, size_t count, const char *what);
/* Fails unless the params record (pointer size, heap range) has been read. */
int cur_need_params(struct cursor *c);

/* The params record in pieces, as each format orders them: its start (byte order and
 * pointer size), the heap range, and its end once all is read (the heap index). */
int cur_params_begin(struct cursor *c);
int cur_params_heap(struct cursor *c);
int cur_params_end(struct cursor *c);

/* Checks and indexes a heap object (at: its contents' length field, for errors). */
int cur_add_object(struct cursor *c, uint64_t addr, struct hr_bytes contents, const uint8_t *at);
/* Marks the word at addr, inside the object added last, as a pointer. */
int cur_object_ptr(struct cursor *c, uint64_t addr);

/* --- go1.3 and go1.4 dumps (dump_legacy.c) --------------------------------------------- */

typedef int (*record_parser)(struct cursor *c);

/* Prepares c->legacy for a dump of format go1.<c->d->dump.minor> (3 or 4). */
int legacy_begin(struct cursor *c);
/*
 * The parser of a record kind whose layout in the dump's format (go1.3, go1.4, or the
 * pre-release go1.3) differs from go1.5's and is read here, or NULL.
 */
record_parser legacy_parser(const struct cursor *c, unsigned kind);
/*
 * next_field() of the older formats, whose field lists also have strings, slices and
 * interfaces: returns 1 with *off for each pointer word they hold, one per call (an
 * interface may give two), 0 at the end of the list, or an error.
 */
int legacy_next_field(struct cursor *c, const uint8_t *contents, uint64_t region_len,
		      const char *region, uint64_t *off);
/* After the heap index is finished: the objects' types from the records. */
int legacy_finish(struct cursor *c);
/* Frees c->legacy (NULL is fine). */
void legacy_end(struct cursor *c);

/* --- the pre-release go1.3 layout (dump_prerelease.c) ---------------------------------- */

/* Whether a go1.3 dump, its header read, is in the pre-release layout (seed 002). */
bool prerelease_detect(const struct cursor *c);
/* Marks the dump as such and prepares c->pre (c->legacy is needed too). */
int prerelease_begin(struct cursor *c);
/* A record kind of that layout as the model's kind (HR_REC_*), or HR_REC_KIND_COUNT. */
unsigned prerelease_kind(uint64_t raw);
/* The parser of a record kind only that layout has or lays out its own way, or NULL. */
record_parser prerelease_parser(unsigned kind);
/* After the last record: links frames into goroutines' stacks and roots to frames. */
int prerelease_finish(struct cursor *c);
/* Frees c->pre (NULL is fine). */
void prerelease_end(struct cursor *c);

#endif
