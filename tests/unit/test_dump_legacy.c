/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_dump_legacy.c - the go1.3 and go1.4 dump formats on hand-made byte sequences:
 * every kind of field turned into the pointer words it holds (figured out here from
 * the layouts, word by word), the types objects get from the records, and the faults
 * only these formats can have, each at its byte offset.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dumpbuf.h"
#include "dumpcheck.h"
#include "heapref/dump.h"

#define HEAP_START UINT64_C(0xc000000000)
#define HEAP_END (HEAP_START + (UINT64_C(1) << 20))
#define HCHAN 32

/* Type and itab addresses (outside the heap, as the binary's own are). */
#define T_ENTRY 0x2000  /* main.Entry: 64 bytes, ptr@0 string@8 eface@24 iface@40 */
#define T_PITEM 0x3000  /* *main.Item: 8 bytes, ptr@0, data word of an eface is a pointer */
#define T_INT 0x3100    /* int: 8 bytes, no pointers, held directly by an eface */
#define T_PAIR 0x3200   /* main.Pair: 16 bytes, ptr@0 */
#define ITAB_PTR 0x1000 /* an itab whose iface data is a pointer (go1.3: flag; go1.4: *main.Item) */

/* Objects, 0x100 apart. */
#define OBJ(n) (HEAP_START + (uint64_t)(n) * 0x100)

static int bytes_eq(struct hr_bytes b, const char *s)
{
	return b.len == strlen(s) && memcmp(b.ptr, s, b.len) == 0;
}

/* The pointer words of the object at addr, as a bit mask (objects of up to 64 words). */
static uint64_t ptr_mask(const struct hr_dump *d, uint64_t addr)
{
	int64_t i = hr_dump_object_at(d, addr);
	uint64_t bits[2] = { 0, 0 };

	assert_true(i >= 0);
	assert_true(hr_dump_object(d, (size_t)i).size <= 64 * 8);
	hr_dump_object_ptr_bits(d, (size_t)i, bits);
	return bits[0];
}

/* The type the records give the object at addr, "prefix+name", or "" if none. */
static const char *type_of(const struct hr_dump *d, uint64_t addr, char *buf, size_t len)
{
	struct hr_object_type t;
	int64_t i = hr_dump_object_at(d, addr);

	assert_true(i >= 0);
	if (!hr_dump_object_type(d, (size_t)i, &t))
		return "";
	snprintf(buf, len, "%s%.*s", t.prefix, (int)t.name.len, (const char *)t.name.ptr);
	return buf;
}

/* Little-endian words. */
static void put_words(uint8_t *mem, const uint64_t *w, size_t n)
{
	for (size_t i = 0; i < n; i++)
		for (int k = 0; k < 8; k++)
			mem[i * 8 + k] = (uint8_t)(w[i] >> (8 * k));
}

static void fields(struct dumpbuf *b, const uint64_t (*kind_off)[2], size_t n)
{
	for (size_t i = 0; i < n; i++) {
		db_uvarint(b, kind_off[i][0]);
		db_uvarint(b, kind_off[i][1]);
	}
	db_uvarint(b, 0);
}

/* --- go1.3 ------------------------------------------------------------------------------ */

static void params13(struct dumpbuf *b)
{
	db_raw(b, "go1.3 heap dump\n", 16);
	db_uvarint(b, 6);
	db_bool(b, 0);
	db_uvarint(b, 8);
	db_uvarint(b, HCHAN);
	db_uvarint(b, HEAP_START);
	db_uvarint(b, HEAP_END);
	db_uvarint(b, '6');
	db_string(b, "");
	db_uvarint(b, 4);
}

static void type13(struct dumpbuf *b, uint64_t addr, uint64_t size, const char *name, int ptr_data,
		   const uint64_t (*kind_off)[2], size_t n)
{
	db_uvarint(b, 3);
	db_uvarint(b, addr);
	db_uvarint(b, size);
	db_string(b, name);
	db_bool(b, ptr_data);
	fields(b, kind_off, n);
}

static void object13(struct dumpbuf *b, uint64_t addr, uint64_t type, uint64_t kind,
		     const uint64_t *words, size_t nwords)
{
	uint8_t mem[64 * 8];

	put_words(mem, words, nwords);
	db_uvarint(b, 1);
	db_uvarint(b, addr);
	db_uvarint(b, type);
	db_uvarint(b, kind);
	db_mem(b, mem, nwords * 8);
}

/* The types and itab every go1.3 test dump starts with. */
static void types13(struct dumpbuf *b)
{
	static const uint64_t entry[][2] = { { 1, 0 }, { 2, 8 }, { 5, 24 }, { 4, 40 } };
	static const uint64_t ptr_at_0[][2] = { { 1, 0 } };

	db_uvarint(b, 8); /* itab: its iface's data is a pointer */
	db_uvarint(b, ITAB_PTR);
	db_bool(b, 1);
	type13(b, T_ENTRY, 64, "main.Entry", 1, entry, 4);
	type13(b, T_PITEM, 8, "*main.Item", 1, ptr_at_0, 1);
	type13(b, T_INT, 8, "int", 0, NULL, 0);
	type13(b, T_PAIR, 16, "main.Pair", 1, ptr_at_0, 1);
}

static void test_go13_objects(void **state)
{
	struct dumpbuf b = { 0 };
	struct hr_dump *d;
	char buf[64];
	/* an Entry: ptr, string {ptr, len}, eface {*main.Item, ptr}, iface {itab, ptr}, int */
	const uint64_t entry[8] = { OBJ(1), OBJ(2), 5, T_PITEM, OBJ(3), ITAB_PTR, OBJ(4), 7 };
	const uint64_t pairs[5] = { OBJ(1), 1, OBJ(2), 2, 0 }; /* [2]Pair in 40 bytes */
	const uint64_t chan[7] = { 0, 0, 0, 0, OBJ(1), OBJ(2), OBJ(3) }; /* header, 3 *Items */
	const uint64_t three[3] = { OBJ(1), 9, OBJ(2) };
	const uint64_t two[2] = { OBJ(1), OBJ(2) };
	const uint64_t eface_int[5] = { T_INT, 42, 0, 0, 0 }; /* an eface holding an int */

	(void)state;
	params13(&b);
	types13(&b);
	object13(&b, OBJ(0), T_ENTRY, 0, entry, 8);
	object13(&b, OBJ(1), 0, 0, two, 2);      /* no type, no pointers */
	object13(&b, OBJ(2), 0, 127, three, 3);  /* no type, scanned conservatively */
	object13(&b, OBJ(3), 0, 0, two, 2);      /* typed only by the eface pointing at it */
	object13(&b, OBJ(4), 0, 0, two, 2);
	object13(&b, OBJ(5), T_PAIR, 1, pairs, 5);
	object13(&b, OBJ(6), T_PITEM, 2, chan, 7);
	{
		static const uint64_t f[][2] = { { 5, 0 }, { 3, 16 } }; /* eface, slice */
		uint8_t mem[40];

		put_words(mem, eface_int, 5);
		db_uvarint(&b, 12); /* data segment */
		db_uvarint(&b, 0x500000);
		db_mem(&b, mem, sizeof(mem));
		fields(&b, f, 2);
	}
	db_eof(&b);
	d = open_ok(&b);
	assert_int_equal(hr_dump_format_minor(d), 3);
	assert_true(bytes_eq(hr_dump_params(d)->goarch, "amd64"));
	assert_true(hr_dump_has_object_types(d));
	/* words 0 (ptr), 1 (string data), 3 and 4 (eface type and data), 5 and 6 (iface) */
	assert_int_equal(ptr_mask(d, OBJ(0)), 0x7b);
	assert_int_equal(ptr_mask(d, OBJ(1)), 0);
	assert_int_equal(ptr_mask(d, OBJ(2)), 0x7);
	assert_int_equal(ptr_mask(d, OBJ(5)), 0x5);   /* Pair at 0 and 16; 32 is no whole Pair */
	assert_int_equal(ptr_mask(d, OBJ(6)), 0x70);  /* elements after the 32-byte header */
	/* the eface holds an int (not a pointer): its type word only; the slice's data */
	assert_int_equal(hr_dump_data(d)->ptr_bits[0], 0x5);
	assert_string_equal(type_of(d, OBJ(0), buf, sizeof(buf)), "main.Entry");
	assert_string_equal(type_of(d, OBJ(1), buf, sizeof(buf)), "");
	assert_string_equal(type_of(d, OBJ(3), buf, sizeof(buf)), "main.Item");
	assert_string_equal(type_of(d, OBJ(4), buf, sizeof(buf)), ""); /* go1.3 itabs name no type */
	assert_string_equal(type_of(d, OBJ(5), buf, sizeof(buf)), "[]main.Pair");
	assert_string_equal(type_of(d, OBJ(6), buf, sizeof(buf)), "chan *main.Item");
	hr_dump_free(d);
	dumpbuf_release(&b);
}

static void test_go13_faults(void **state)
{
	struct dumpbuf b = { 0 };
	const uint64_t two[2] = { 1, 2 };
	uint64_t at;

	(void)state;
	params13(&b); /* an object whose type no record described */
	types13(&b);
	at = b.len;
	object13(&b, OBJ(0), 0x9999, 0, two, 2);
	db_eof(&b);
	expect_fault(&b, at + 1 + 6, "names type 0x9999, which no type record before it describes");
	dumpbuf_release(&b);

	params13(&b); /* a kind that is none of the four */
	types13(&b);
	at = b.len;
	object13(&b, OBJ(0), T_PAIR, 3, two, 2);
	db_eof(&b);
	expect_fault(&b, at, "has kind 3 (want 0 one value, 1 array, 2 channel)");
	dumpbuf_release(&b);

	params13(&b); /* an object smaller than its type */
	types13(&b);
	at = b.len;
	object13(&b, OBJ(0), T_ENTRY, 0, two, 2);
	db_eof(&b);
	expect_fault(&b, at, "is smaller than its type 0x2000 (64 bytes)");
	dumpbuf_release(&b);

	params13(&b); /* field kind 6 */
	at = b.len;
	{
		static const uint64_t bad[][2] = { { 6, 0 } };

		type13(&b, T_PAIR, 16, "main.Pair", 1, bad, 1);
	}
	db_eof(&b);
	expect_fault(&b, at + 1 + 2 + 1 + 1 + 9 + 1, "field kind 6 in the type's field list (go1.3: want 1 pointer");
	dumpbuf_release(&b);

	params13(&b); /* fields that overlap, and one past the type's end */
	at = b.len;
	{
		static const uint64_t overlap[][2] = { { 2, 0 }, { 1, 8 } };

		type13(&b, T_PAIR, 16, "main.Pair", 1, overlap, 2);
	}
	db_eof(&b);
	expect_fault(&b, at + 1 + 2 + 1 + 1 + 9 + 1 + 2, "overlaps the one before it");
	dumpbuf_release(&b);

	params13(&b);
	at = b.len;
	{
		static const uint64_t past[][2] = { { 4, 8 } };

		type13(&b, T_PAIR, 16, "main.Pair", 1, past, 1);
	}
	db_eof(&b);
	expect_fault(&b, at + 1 + 2 + 1 + 1 + 9 + 1 + 1, "field at offset 8 (16 bytes) lies outside the type (16 bytes)");
	dumpbuf_release(&b);
}

/* --- go1.4 ------------------------------------------------------------------------------ */

static void params14(struct dumpbuf *b)
{
	db_raw(b, "go1.4 heap dump\n", 16);
	db_uvarint(b, 6);
	db_bool(b, 0);
	db_uvarint(b, 8);
	db_uvarint(b, HEAP_START);
	db_uvarint(b, HEAP_END);
	db_uvarint(b, '6');
	db_string(b, "");
	db_uvarint(b, 4);
}

static void type14(struct dumpbuf *b, uint64_t addr, uint64_t size, const char *name, int ptr_data)
{
	db_uvarint(b, 3);
	db_uvarint(b, addr);
	db_uvarint(b, size);
	db_string(b, name);
	db_bool(b, ptr_data);
}

static void object14(struct dumpbuf *b, uint64_t addr, const uint64_t *words, size_t nwords,
		     const uint64_t (*kind_off)[2], size_t n)
{
	uint8_t mem[64 * 8];

	put_words(mem, words, nwords);
	db_uvarint(b, 1);
	db_uvarint(b, addr);
	db_mem(b, mem, nwords * 8);
	fields(b, kind_off, n);
}

static void test_go14_objects(void **state)
{
	struct dumpbuf b = { 0 };
	struct hr_dump *d;
	char buf[64];
	/* ptr, iface {itab of *main.Item, ptr}, eface {map[string]int, ptr}, eface {int, 42} */
	const uint64_t holder[7] = { OBJ(1), ITAB_PTR, OBJ(2), 0x4000, OBJ(3), T_INT, 42 };
	static const uint64_t f[][2] = { { 1, 0 }, { 2, 8 }, { 3, 24 }, { 3, 40 } };
	const uint64_t two[2] = { 0, 0 };

	(void)state;
	params14(&b);
	type14(&b, T_PITEM, 8, "*main.Item", 1);
	type14(&b, 0x4000, 8, "map[string]int", 1);
	type14(&b, T_INT, 8, "int", 0);
	db_uvarint(&b, 8); /* itab -> the type of its data word */
	db_uvarint(&b, ITAB_PTR);
	db_uvarint(&b, T_PITEM);
	object14(&b, OBJ(0), holder, 7, f, 4);
	object14(&b, OBJ(1), two, 2, NULL, 0);
	object14(&b, OBJ(2), two, 2, NULL, 0);
	object14(&b, OBJ(3), two, 2, NULL, 0);
	db_eof(&b);
	d = open_ok(&b);
	assert_int_equal(hr_dump_format_minor(d), 4);
	assert_true(bytes_eq(hr_dump_params(d)->goarch, "amd64"));
	/* words 0; 1 and 2 (iface); 3 and 4 (eface of a map); 5 (eface of an int: no data) */
	assert_int_equal(ptr_mask(d, OBJ(0)), 0x3f);
	assert_string_equal(type_of(d, OBJ(0), buf, sizeof(buf)), "");
	assert_string_equal(type_of(d, OBJ(1), buf, sizeof(buf)), "");
	assert_string_equal(type_of(d, OBJ(2), buf, sizeof(buf)), "main.Item");
	assert_string_equal(type_of(d, OBJ(3), buf, sizeof(buf)), "map[string]int");
	hr_dump_free(d);
	dumpbuf_release(&b);
}

static void test_go14_faults(void **state)
{
	struct dumpbuf b = { 0 };
	const uint64_t two[2] = { 0, 0 };
	static const uint64_t string_kind[][2] = { { 4, 0 } }; /* go1.3's iface: no kind in go1.4 */
	static const uint64_t tail[][2] = { { 3, 8 } };        /* an eface in the last word */
	uint64_t at;

	(void)state;
	params14(&b);
	at = b.len;
	object14(&b, OBJ(0), two, 2, string_kind, 1);
	db_eof(&b);
	expect_fault(&b, at + 1 + 6 + 1 + 16, "field kind 4 in the object's field list (go1.4: want 1 pointer, 2 iface, 3 eface");
	dumpbuf_release(&b);

	params14(&b);
	at = b.len;
	object14(&b, OBJ(0), two, 2, tail, 1);
	db_eof(&b);
	expect_fault(&b, at + 1 + 6 + 1 + 16 + 1, "field at offset 8 (16 bytes) lies outside the object (16 bytes)");
	dumpbuf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_go13_objects),
		cmocka_unit_test(test_go13_faults),
		cmocka_unit_test(test_go14_objects),
		cmocka_unit_test(test_go14_faults),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
