/* SPDX-License-Identifier: Apache-2.0 */
/* gotypes.c - Go's DWARF types on a binary fixture (gotypes.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>

#include "gotypes.h"

uint32_t gt_base(struct go_types *g, const char *name, uint8_t kind, uint64_t size)
{
	return binary_fixture_type(g->fx, &(struct hr_type){ .name = name, .kind = kind,
							     .shape = HR_SHAPE_BASE, .size = size });
}

static uint32_t with_rt(struct go_types *g, struct hr_type t, uint64_t rt)
{
	if (rt) {
		t.runtime_type = rt;
		t.flags |= HR_TYPE_HAS_RUNTIME_TYPE;
	}
	return binary_fixture_type(g->fx, &t);
}

uint32_t gt_struct(struct go_types *g, const char *name, uint64_t size, uint64_t rt)
{
	return with_rt(g, (struct hr_type){ .name = name, .kind = HR_KIND_STRUCT,
					    .shape = HR_SHAPE_STRUCT, .size = size }, rt);
}

uint32_t gt_ptr(struct go_types *g, const char *name, uint32_t target, uint64_t rt)
{
	return with_rt(g, (struct hr_type){ .name = name, .kind = HR_KIND_PTR,
					    .shape = HR_SHAPE_POINTER, .target = target }, rt);
}

uint32_t gt_array(struct go_types *g, const char *name, uint32_t elem, uint64_t count,
		  uint64_t elem_size)
{
	return binary_fixture_type(g->fx, &(struct hr_type){ .name = name, .kind = HR_KIND_ARRAY,
		.shape = HR_SHAPE_ARRAY, .size = count * elem_size, .elem = elem, .count = count,
		.flags = HR_TYPE_HAS_COUNT });
}

uint32_t gt_typedef(struct go_types *g, const char *name, uint32_t target)
{
	return binary_fixture_type(g->fx, &(struct hr_type){ .name = name, .kind = HR_KIND_INVALID,
		.shape = HR_SHAPE_TYPEDEF, .target = target });
}

uint32_t gt_slice(struct go_types *g, const char *name, uint32_t elem, uint32_t ptr_to_elem)
{
	uint32_t id = binary_fixture_type(g->fx, &(struct hr_type){ .name = name,
		.kind = HR_KIND_SLICE, .shape = HR_SHAPE_STRUCT, .size = 24, .elem = elem });

	binary_fixture_member(g->fx, id, "array", 0, ptr_to_elem);
	binary_fixture_member(g->fx, id, "len", 8, g->i64);
	binary_fixture_member(g->fx, id, "cap", 16, g->i64);
	return id;
}

/* runtime.eface or runtime.iface: {first *T; data unsafe.Pointer}, T an opaque struct. */
static uint32_t iface_struct(struct go_types *g, const char *name, const char *first,
			     const char *tname, const char *ptr_name)
{
	uint32_t t = gt_struct(g, tname, 48, 0);
	uint32_t ptr = gt_ptr(g, ptr_name, t, 0);
	uint32_t id = gt_struct(g, name, 16, 0);

	binary_fixture_member(g->fx, id, first, 0, ptr);
	binary_fixture_member(g->fx, id, "data", 8, g->unsafe_ptr);
	return id;
}

static uint32_t iface_typedef(struct go_types *g, const char *name, uint32_t target)
{
	return binary_fixture_type(g->fx, &(struct hr_type){ .name = name,
		.kind = HR_KIND_INTERFACE, .shape = HR_SHAPE_TYPEDEF, .target = target });
}

uint32_t gt_iface(struct go_types *g, const char *name)
{
	return iface_typedef(g, name, iface_struct(g, "runtime.iface", "tab", "runtime.itab",
						   "*runtime.itab"));
}

void gt_init(struct go_types *g, const char *go_version)
{
	g->fx = binary_fixture_new(8, go_version);
	assert_non_null(g->fx);
	g->u8 = gt_base(g, "uint8", HR_KIND_UINT8, 1);
	g->u16 = gt_base(g, "uint16", HR_KIND_UINT16, 2);
	g->u32 = gt_base(g, "uint32", HR_KIND_UINT32, 4);
	g->i64 = gt_base(g, "int", HR_KIND_INT, 8);
	g->uintptr = gt_base(g, "uintptr", HR_KIND_UINTPTR, 8);
	g->ptr_u8 = gt_ptr(g, "*uint8", g->u8, 0);
	/* what Go writes for unsafe.Pointer: no DW_AT_type, no DW_AT_go_kind */
	g->unsafe_ptr = binary_fixture_type(g->fx, &(struct hr_type){ .name = "unsafe.Pointer",
		.kind = HR_KIND_PTR, .shape = HR_SHAPE_POINTER });
	g->string = binary_fixture_type(g->fx, &(struct hr_type){ .name = "string",
		.kind = HR_KIND_STRING, .shape = HR_SHAPE_STRUCT, .size = 16 });
	binary_fixture_member(g->fx, g->string, "str", 0, g->ptr_u8);
	binary_fixture_member(g->fx, g->string, "len", 8, g->i64);
	g->bytes = gt_slice(g, "[]uint8", g->u8, g->ptr_u8);
	g->eface = iface_typedef(g, "interface {}", iface_struct(g, "runtime.eface", "_type",
								 "internal/abi.Type",
								 "*internal/abi.Type"));
}

/* Go's map[K]V: a typedef (kind map, key K, elem V) of a pointer to the runtime's header. */
static uint32_t map_typedef(struct go_types *g, const char *name, uint32_t header_ptr,
			    uint32_t key, uint32_t val)
{
	return binary_fixture_type(g->fx, &(struct hr_type){ .name = name, .kind = HR_KIND_MAP,
		.shape = HR_SHAPE_TYPEDEF, .size = 8, .target = header_ptr, .key = key, .elem = val });
}

uint32_t gt_bucket_map(struct go_types *g, const char *name, const char *kname, uint32_t key,
		       uint64_t ksize, const char *vname, uint32_t val, uint64_t vsize)
{
	char bucket_name[256], ptr_name[260], keys_name[256], vals_name[256];
	uint32_t bucket, bucket_ptr, hash, extra;

	snprintf(bucket_name, sizeof(bucket_name), "bucket<%s,%s>", kname, vname);
	snprintf(ptr_name, sizeof(ptr_name), "*%s", bucket_name);
	snprintf(keys_name, sizeof(keys_name), "[]key<%s>", kname);
	snprintf(vals_name, sizeof(vals_name), "[]val<%s>", vname);
	bucket = gt_struct(g, bucket_name, 8 + 8 * ksize + 8 * vsize + 8, 0);
	bucket_ptr = gt_ptr(g, ptr_name, bucket, 0);
	binary_fixture_member(g->fx, bucket, "tophash", 0, gt_array(g, "[8]uint8", g->u8, 8, 1));
	binary_fixture_member(g->fx, bucket, "keys", 8, gt_array(g, keys_name, key, 8, ksize));
	binary_fixture_member(g->fx, bucket, "values", 8 + 8 * ksize,
			      gt_array(g, vals_name, val, 8, vsize));
	binary_fixture_member(g->fx, bucket, "overflow", 8 + 8 * ksize + 8 * vsize, bucket_ptr);
	extra = gt_ptr(g, "*runtime.mapextra", gt_struct(g, "runtime.mapextra", 24, 0), 0);
	snprintf(bucket_name, sizeof(bucket_name), "hash<%s,%s>", kname, vname);
	hash = gt_struct(g, bucket_name, 48, 0);
	binary_fixture_member(g->fx, hash, "count", 0, g->i64);
	binary_fixture_member(g->fx, hash, "flags", 8, g->u8);
	binary_fixture_member(g->fx, hash, "B", 9, g->u8);
	binary_fixture_member(g->fx, hash, "noverflow", 10, g->u16);
	binary_fixture_member(g->fx, hash, "hash0", 12, g->u32);
	binary_fixture_member(g->fx, hash, "buckets", 16, bucket_ptr);
	binary_fixture_member(g->fx, hash, "oldbuckets", 24, bucket_ptr);
	binary_fixture_member(g->fx, hash, "nevacuate", 32, g->uintptr);
	binary_fixture_member(g->fx, hash, "extra", 40, extra);
	snprintf(ptr_name, sizeof(ptr_name), "*%s", bucket_name);
	return map_typedef(g, name, gt_ptr(g, ptr_name, hash, 0), key, val);
}

uint32_t gt_swiss_map(struct go_types *g, const char *name, const char *kname, uint32_t key,
		      uint64_t ksize, const char *vname, uint32_t val, uint64_t vsize)
{
	char n_slot[256], n_slots[264], n_group[256], n_group_ptr[260], n_ref[256], n_table[256],
		n_table_ptr[260], n_dir[264], n_map[256], n_map_ptr[260];
	uint32_t slot, group, ref, table, table_ptr, map, u64;
	uint64_t slot_size = ksize + vsize;

	snprintf(n_slot, sizeof(n_slot), "noalg.struct { key %s; elem %s }", kname, vname);
	snprintf(n_slots, sizeof(n_slots), "noalg.[8]%s", n_slot + 6);
	snprintf(n_group, sizeof(n_group), "noalg.map.group[%s]%s", kname, vname);
	snprintf(n_group_ptr, sizeof(n_group_ptr), "*%s", n_group);
	snprintf(n_ref, sizeof(n_ref), "groupReference<%s,%s>", kname, vname);
	snprintf(n_table, sizeof(n_table), "table<%s,%s>", kname, vname);
	snprintf(n_table_ptr, sizeof(n_table_ptr), "*%s", n_table);
	snprintf(n_dir, sizeof(n_dir), "**%s", n_table);
	snprintf(n_map, sizeof(n_map), "map<%s,%s>", kname, vname);
	snprintf(n_map_ptr, sizeof(n_map_ptr), "*%s", n_map);
	u64 = gt_base(g, "uint64", HR_KIND_UINT64, 8);
	slot = gt_struct(g, n_slot, slot_size, 0);
	binary_fixture_member(g->fx, slot, "key", 0, key);
	binary_fixture_member(g->fx, slot, "elem", ksize, val);
	group = gt_struct(g, n_group, 8 + 8 * slot_size, 0);
	binary_fixture_member(g->fx, group, "ctrl", 0, u64);
	/* as Go's DWARF has them: the group and its slots array reached through typedefs */
	binary_fixture_member(g->fx, group, "slots", 8,
			      gt_typedef(g, n_slots, gt_array(g, n_slots, slot, 8, slot_size)));
	ref = gt_struct(g, n_ref, 16, 0);
	binary_fixture_member(g->fx, ref, "data", 0,
			      gt_ptr(g, n_group_ptr, gt_typedef(g, n_group, group), 0));
	binary_fixture_member(g->fx, ref, "lengthMask", 8, u64);
	table = gt_struct(g, n_table, 32, 0);
	binary_fixture_member(g->fx, table, "used", 0, g->u16);
	binary_fixture_member(g->fx, table, "capacity", 2, g->u16);
	binary_fixture_member(g->fx, table, "growthLeft", 4, g->u16);
	binary_fixture_member(g->fx, table, "localDepth", 6, g->u8);
	binary_fixture_member(g->fx, table, "index", 8, g->i64);
	binary_fixture_member(g->fx, table, "groups", 16, ref);
	table_ptr = gt_ptr(g, n_table_ptr, table, 0);
	map = gt_struct(g, n_map, 48, 0);
	binary_fixture_member(g->fx, map, "used", 0, u64);
	binary_fixture_member(g->fx, map, "seed", 8, g->uintptr);
	binary_fixture_member(g->fx, map, "dirPtr", 16, gt_ptr(g, n_dir, table_ptr, 0));
	binary_fixture_member(g->fx, map, "dirLen", 24, g->i64);
	binary_fixture_member(g->fx, map, "globalDepth", 32, g->u8);
	binary_fixture_member(g->fx, map, "globalShift", 33, g->u8);
	binary_fixture_member(g->fx, map, "writing", 34, g->u8);
	binary_fixture_member(g->fx, map, "tombstonePossible", 35, g->u8);
	binary_fixture_member(g->fx, map, "clearSeq", 40, u64);
	return map_typedef(g, name, gt_ptr(g, n_map_ptr, map, 0), key, val);
}
