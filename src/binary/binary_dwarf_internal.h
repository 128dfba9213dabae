/* SPDX-License-Identifier: Apache-2.0 */
/*
 * binary_dwarf_internal.h - what binary_dwarf.c (eager loading) and binary_vars.c
 * (lazy per-function loading) share: the libdwarf state kept for the binary's
 * lifetime and a DIE's attributes gathered in one pass.
 */
#ifndef HEAPREF_BINARY_DWARF_INTERNAL_H
#define HEAPREF_BINARY_DWARF_INTERNAL_H

#include "binary_internal.h"
#include "dwarf_compat.h"

/* Go's DWARF extensions (DW_AT_go_*), numbered here so older dwarf.h files work too. */
#define HR_DW_AT_go_kind 0x2900
#define HR_DW_AT_go_key 0x2901
#define HR_DW_AT_go_elem 0x2902
#define HR_DW_AT_go_embedded_field 0x2903
#define HR_DW_AT_go_runtime_type 0x2904
#define HR_DW_AT_go_closure_offset 0x2907

#undef DW_AT_go_kind
#undef DW_AT_go_key
#undef DW_AT_go_elem
#undef DW_AT_go_embedded_field
#undef DW_AT_go_runtime_type
#undef DW_AT_go_closure_offset
#define DW_AT_go_kind HR_DW_AT_go_kind
#define DW_AT_go_key HR_DW_AT_go_key
#define DW_AT_go_elem HR_DW_AT_go_elem
#define DW_AT_go_embedded_field HR_DW_AT_go_embedded_field
#define DW_AT_go_runtime_type HR_DW_AT_go_runtime_type
#define DW_AT_go_closure_offset HR_DW_AT_go_closure_offset

/*
 * The libdwarf handle stays open until hr_binary_free(): function variables are read
 * from it on demand. Nothing in the tables points into it (names are copied).
 */
struct dwarf_state {
	Dwarf_Debug dbg;
	struct dwc_obj *obj;
};

/* The attributes of one DIE that heapref uses; name points into libdwarf's memory. */
struct die_info {
	Dwarf_Half tag;
	Dwarf_Off offset;
	char *name;
	bool want_global;     /* decode DW_AT_location as a global's address */
	bool has_size, has_type, has_key, has_elem, has_origin, has_kind, has_rt;
	bool has_closure, has_member_loc, has_count, has_upper, has_low, has_high;
	bool high_is_offset, has_ranges, is_inline, embedded, has_location, has_addr;
	uint64_t size, type_off, key_off, elem_off, origin_off, kind, rt, closure_off;
	uint64_t member_loc, count, upper, low_pc, high_pc, addr;
};

/* Reads the tag, offset and attributes of die into info (zeroed by the caller). */
int dw_read_die(struct hr_binary *bin, Dwarf_Die die, struct die_info *info,
		struct hr_error *err);
/* Calls fn(ctx, child) for each child of die; stops at the first non-zero result. */
int dw_children(struct hr_binary *bin, Dwarf_Die die, int (*fn)(void *, Dwarf_Die),
		void *ctx, struct hr_error *err);
/* Reports a libdwarf failure (and frees derr): "FILE: DWARF DIE at 0x..: what: why". */
int dw_fail(struct hr_binary *bin, Dwarf_Error derr, uint64_t die_off, const char *what,
	    struct hr_error *err);

#endif
