/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gotypes.h - Go's types as its compiler describes them in DWARF (as `heapref types`
 * lists them for a real binary), added to a binary made by hand (binary_fixture.h):
 * the shapes, kinds, names and members the scanner's layouts read. Each function
 * returns the id of the type the Go name denotes.
 */
#ifndef HEAPREF_TEST_GOTYPES_H
#define HEAPREF_TEST_GOTYPES_H

#include <stdint.h>

#include "binary_fixture.h"

/* The types every program has, made by gt_init(). */
struct go_types {
	struct binary_fixture *fx;
	uint32_t u8, u16, u32, i64 /* "int" */, uintptr;
	uint32_t ptr_u8;        /* *uint8 */
	uint32_t unsafe_ptr;    /* unsafe.Pointer: a DW_TAG_pointer_type with no type, no Go kind */
	uint32_t string;        /* struct string {str *uint8; len int}, kind string */
	uint32_t bytes;         /* struct []uint8 {array *uint8; len int; cap int}, kind slice */
	uint32_t eface;         /* typedef interface {} (kind interface) of runtime.eface */
};

/* A fixture for Go 8-byte pointers built by go_version, with the types above. */
void gt_init(struct go_types *g, const char *go_version);

uint32_t gt_base(struct go_types *g, const char *name, uint8_t kind, uint64_t size);
/* A struct (members: binary_fixture_member()); rt: its runtime type offset, 0 none. */
uint32_t gt_struct(struct go_types *g, const char *name, uint64_t size, uint64_t rt);
/* A pointer to target; rt as above. */
uint32_t gt_ptr(struct go_types *g, const char *name, uint32_t target, uint64_t rt);
/* An array of count elements of elem, each elem_size bytes. */
uint32_t gt_array(struct go_types *g, const char *name, uint32_t elem, uint64_t count,
		  uint64_t elem_size);
/* A typedef called name of target (no Go kind of its own). */
uint32_t gt_typedef(struct go_types *g, const char *name, uint32_t target);
/* A slice of elem: struct {array *elem; len int; cap int} named name ("[]*main.Item"). */
uint32_t gt_slice(struct go_types *g, const char *name, uint32_t elem, uint32_t ptr_to_elem);
/*
 * A non-empty interface called name: a typedef (kind interface) of runtime.iface
 * {tab *runtime.itab; data unsafe.Pointer}.
 */
uint32_t gt_iface(struct go_types *g, const char *name);
/*
 * A Go <= 1.23 map[K]V called name ("map[string]*main.Entry"): a typedef (kind map,
 * key K, elem V) of *hash<K,V> {count int; flags, B uint8; noverflow uint16; hash0
 * uint32; buckets, oldbuckets *bucket<K,V>; nevacuate uintptr; extra
 * *runtime.mapextra} (48 bytes), a bucket being {tophash [8]uint8; keys []key<K>;
 * values []val<V>; overflow *bucket<K,V>}, its arrays of 8 keys and 8 values named so.
 */
uint32_t gt_bucket_map(struct go_types *g, const char *name, const char *kname, uint32_t key,
		       uint64_t ksize, const char *vname, uint32_t val, uint64_t vsize);
/*
 * A Go >= 1.24 (swiss) map[K]V called name, as the compiler's DWARF has it: a typedef
 * (kind map, key K, elem V) of *map<K,V> {used uint64; seed uintptr; dirPtr
 * **table<K,V>; dirLen int; globalDepth, globalShift, writing uint8; tombstonePossible
 * bool; clearSeq uint64} (48 bytes). A table<K,V> is {used, capacity, growthLeft uint16;
 * localDepth uint8; index int; groups groupReference<K,V> {data *group; lengthMask
 * uint64}} (32 bytes); a group noalg.map.group[K]V {ctrl uint64; slots [8]struct { key
 * K; elem V }}, the group and its slots array each reached through a typedef of the
 * same name. K and V are whole words (ksize, vsize): no padding in a slot.
 */
uint32_t gt_swiss_map(struct go_types *g, const char *name, const char *kname, uint32_t key,
		      uint64_t ksize, const char *vname, uint32_t val, uint64_t vsize);

#endif
