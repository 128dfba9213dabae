/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dwarf_compat.h - the one place that knows libdwarf has two generations of API:
 * Debian 12's 20210528 and the 0.x/2.x releases (which define
 * DW_LIBDWARF_VERSION_MAJOR). Every call whose signature differs goes through here.
 *
 * It also owns how libdwarf gets the sections. Each handle opens the file as its own
 * libelf Elf (ELF_C_READ: section data is read with pread() when first asked for, never
 * through a file mapping) and hands libdwarf an object-access interface whose load
 * callback decompresses SHF_COMPRESSED (zlib, Go >= 1.19) and .zdebug_* (older Go)
 * sections with libelf's elf_compress()/elf_compress_gnu(), so libdwarf never sees
 * compressed data (Debian's libdwarf refuses sections that inflate more than 16x).
 * The decompressed bytes belong to that Elf: dwc_close() frees them all.
 *
 * A view chooses which sections libdwarf is told about. Both hide the range lists
 * (.debug_ranges, .debug_rnglists: heapref only notes that DW_AT_ranges is there) and
 * the types view also hides the location lists (.debug_loc, .debug_loclists), which
 * libdwarf would otherwise inflate while setting up the first compilation unit
 * although the eager load never reads them. (.debug_line and .debug_frame are shown
 * but never asked for, so never read.)
 */
#ifndef HEAPREF_DWARF_COMPAT_H
#define HEAPREF_DWARF_COMPAT_H

#include <stdbool.h>
#include <stdint.h>

#include <libelf.h>
#include <dwarf.h>
#include <libdwarf.h>

#include "heapref/base.h"

struct dwc_obj;  /* the object-access state: sections of one Elf */

enum dwc_view {
	DWC_VIEW_TYPES,  /* no location or range lists: types, globals, function ranges */
	DWC_VIEW_VARS,   /* also the location lists: function variables */
};

/*
 * Starts libdwarf on the ELF file open as fd (which must stay open until dwc_close()),
 * showing it the sections of view. path names the file in errors; a section bigger
 * than max_section bytes (inflated) fails to load. Returns 0 and sets *dbg and *obj,
 * 1 when the file has no DWARF (*dbg and *obj NULL), or a negative HR_E* with err set.
 */
int dwc_open(int fd, const char *path, uint64_t max_section, enum dwc_view view,
	     Dwarf_Debug *dbg, struct dwc_obj **obj, struct hr_error *err);
/* Ends libdwarf, frees obj and every section it inflated; NULLs are fine. */
void dwc_close(Dwarf_Debug dbg, struct dwc_obj *obj);
/* The (uncompressed) size of the section called name (".debug_info"), 0 if none. */
uint64_t dwc_section_size(const struct dwc_obj *obj, const char *name);
/* The message of a libdwarf error, and frees the error. */
void dwc_errmsg(Dwarf_Debug dbg, Dwarf_Error derr, char *buf, size_t len);

/*
 * Whether the DWARF 5 location list at offset in .debug_loclists is whole: each entry
 * of a kind DWARF 5 defines and inside the section, up to an end-of-list entry. Only
 * such a list may go to libdwarf: 20210528 does not check an entry's expression length
 * against the section and reads past its end on a corrupt one.
 */
bool dwc_loclist_whole(struct dwc_obj *obj, uint64_t offset);

/* Next compilation unit: its DIE, DWARF version and offset size. DW_DLV_* result. */
int dwc_next_cu(Dwarf_Debug dbg, Dwarf_Die *cu_die, Dwarf_Half *version,
		Dwarf_Half *offset_size, Dwarf_Error *derr);
/* Next sibling of die (a DIE inside .debug_info). DW_DLV_* result. */
int dwc_sibling(Dwarf_Debug dbg, Dwarf_Die die, Dwarf_Die *out, Dwarf_Error *derr);

/* One entry of a location list (or the single entry of an expression). */
struct dwc_loc_entry {
	bool all_pcs;          /* an exprloc, valid wherever the variable is in scope */
	Dwarf_Addr low_pc;     /* cooked: absolute addresses */
	Dwarf_Addr high_pc;
	Dwarf_Unsigned op_count;
	Dwarf_Locdesc_c desc;
	bool skip;             /* base-address or end-of-list entry: no location */
};

int dwc_loc_entry(Dwarf_Loc_Head_c head, Dwarf_Unsigned index, struct dwc_loc_entry *out,
		  Dwarf_Error *derr);
void dwc_loc_free(Dwarf_Debug dbg, Dwarf_Loc_Head_c head);

#endif
