/*
 * dwarf_compat.h - the one place that knows libdwarf has two generations of API:
 * Debian 12's 20210528 and the 0.x/2.x releases (which define
 * DW_LIBDWARF_VERSION_MAJOR). Every call whose signature differs goes through here.
 *
 * It also owns how libdwarf gets the sections: we open the ELF with libelf ourselves
 * and hand libdwarf an object-access interface whose load callback decompresses
 * SHF_COMPRESSED (zlib, Go >= 1.19) and .zdebug_* (older Go) sections with libelf's
 * elf_compress()/elf_compress_gnu(), so libdwarf never sees compressed data (Debian's
 * libdwarf refuses sections that inflate more than 16x). The decompressed bytes are
 * owned by the Elf handle and live until elf_end().
 */
#ifndef HEAPREF_DWARF_COMPAT_H
#define HEAPREF_DWARF_COMPAT_H

#include <libelf.h>
#include <dwarf.h>
#include <libdwarf.h>

#include "heapref/base.h"

struct dwc_obj;  /* the object-access state: sections of one Elf */

/*
 * Starts libdwarf on elf (which must outlive the result). path names the file in
 * errors. Returns 0 and sets *dbg and *obj, DW_DLV_NO_ENTRY-like 1 when the file has
 * no DWARF (*dbg NULL), or a negative HR_E* with err set.
 */
int dwc_open(Elf *elf, const char *path, uint64_t max_section, Dwarf_Debug *dbg,
	     struct dwc_obj **obj, struct hr_error *err);
/* Ends libdwarf and frees obj; NULLs are fine. */
void dwc_close(Dwarf_Debug dbg, struct dwc_obj *obj);
/* The message of a libdwarf error, and frees the error. */
void dwc_errmsg(Dwarf_Debug dbg, Dwarf_Error derr, char *buf, size_t len);

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
