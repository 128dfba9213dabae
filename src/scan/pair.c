/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pair.c - does this dump go with this binary, and does heapref know their Go?
 *
 * A dump analysed with the wrong binary does not fail by itself: addresses resolve to
 * the wrong variables and types, and the chains come out confidently wrong. So before
 * scanning, the CLI compares what both sides record about the build: the Go version,
 * the sizes and relative position of the data and bss segments (the load bias of a
 * position-independent binary moves both by the same amount, so only their distance is
 * compared), the functions of the dump's stack frames, and the pointer bitmaps of data
 * and bss against the DWARF types of the globals there. Small programs built by one
 * toolchain often have data and bss of identical sizes; the last two tell them apart.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "scan_internal.h"

/* Appends one difference to why, "; " between them; silently truncates. */
static void add_difference(char *why, size_t len, const char *fmt, ...) HR_PRINTF(3, 4);

static void add_difference(char *why, size_t len, const char *fmt, ...)
{
	size_t used = strlen(why);
	va_list ap;

	if (used && used + 2 < len) {
		memcpy(why + used, "; ", 3);
		used += 2;
	}
	if (used + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(why + used, len - used, fmt, ap);
	va_end(ap);
}

static void compare_versions(const struct hr_dump *dump, const struct hr_binary *bin, char *why,
			     size_t len)
{
	const char *dv = hr_dump_provenance(dump)->go_version;
	const char *bv = hr_binary_go_version(bin);

	if (!bv[0] || !dv[0])
		return; /* one side does not say: nothing to compare */
	if (strcmp(bv, dv))
		add_difference(why, len, "the dump was written by %s, the binary built by %s", dv,
			       bv);
}

static void compare_segment(const struct hr_segment *seg, const struct hr_binary *bin,
			    const char *section, char *why, size_t len)
{
	uint64_t addr, size;

	if (!seg->present)
		return;
	if (!hr_binary_section_range(bin, section, &addr, &size)) {
		add_difference(why, len, "the dump has a %s segment, the binary no %s section",
			       section + 1, section);
		return;
	}
	if (seg->contents.len != size)
		add_difference(why, len, "the dump's %s segment is %" PRIu64
			       " bytes, the binary's %s section %" PRIu64,
			       section + 1, seg->contents.len, section, size);
}

static void compare_layout(const struct hr_dump *dump, const struct hr_binary *bin, char *why,
			   size_t len)
{
	const struct hr_segment *data = hr_dump_data(dump), *bss = hr_dump_bss(dump);
	uint64_t data_addr, bss_addr, size;

	compare_segment(data, bin, ".data", why, len);
	compare_segment(bss, bin, ".bss", why, len);
	if (!data->present || !bss->present ||
	    !hr_binary_section_range(bin, ".data", &data_addr, &size) ||
	    !hr_binary_section_range(bin, ".bss", &bss_addr, &size))
		return;
	if (bss->addr - data->addr != bss_addr - data_addr)
		add_difference(why, len, "bss starts 0x%" PRIx64 " bytes after data in the dump, "
			       "0x%" PRIx64 " in the binary",
			       bss->addr - data->addr, bss_addr - data_addr);
}

/* The runtime's name of a function against its ELF symbol (assembly ones end ".abi0"). */
static bool same_function(const char *symbol, const struct hr_bytes *func)
{
	size_t n = strlen(symbol);

	if (n < func->len || memcmp(symbol, func->ptr, func->len))
		return false;
	return n == func->len || !strncmp(symbol + func->len, ".abi", 4);
}

/*
 * Each frame record names the function at its entry PC; in the binary that wrote the
 * dump, the ELF symbol starting there has the same name and extends past the frame's PC.
 * Needs the symbol table and the load bias (set by hr_scan_new from the data segment).
 */
static void compare_frames(const struct hr_dump *dump, const struct hr_image *img, char *why,
			   size_t len)
{
	const struct hr_binary *bin = img->bin;
	size_t n, differ = 0;
	const struct hr_frame *frames = hr_dump_frames(dump, &n);
	const struct hr_frame *first = NULL;
	const struct hr_symbol *first_sym = NULL;

	if (!hr_binary_has_symbols(bin))
		return;
	for (size_t i = 0; i < n; i++) {
		const struct hr_symbol *sym = hr_image_symbol_at(img, frames[i].entry_pc);
		uint64_t start = sym ? hr_image_runtime(img, sym->addr) : 0;

		if (sym && start == frames[i].entry_pc &&
		    same_function(sym->name, &frames[i].func_name) &&
		    (!sym->size || frames[i].pc - start < sym->size))
			continue;
		if (!differ++) {
			first = &frames[i];
			first_sym = sym && start == frames[i].entry_pc ? sym : NULL;
		}
	}
	if (differ)
		add_difference(why, len, "%zu of %zu stack frames name other functions than the "
			       "binary's symbols (0x%" PRIx64 " is %.*s in the dump, %s in the binary)",
			       differ, n, first->entry_pc, (int)first->func_name.len,
			       (const char *)first->func_name.ptr,
			       first_sym ? first_sym->name : "no function start");
}

/*
 * Whether the dump's segment bitmap calls the word at addr a pointer; -1 when addr is
 * not a whole word inside the segment.
 */
static int segment_ptr_bit(const struct hr_segment *seg, uint64_t addr, unsigned ps)
{
	uint64_t off = addr - seg->addr;

	if (!seg->present || addr < seg->addr || off >= seg->contents.len || off % ps ||
	    seg->contents.len - off < ps)
		return -1;
	return hr_bit_get(seg->ptr_bits, off / ps);
}

/*
 * The GC's bitmaps of data and bss come from the binary that wrote the dump, so a global
 * whose DWARF type is a pointer sits on a pointer word, and a word-sized number does not.
 * Programs with data and bss of equal sizes still disagree here when their globals
 * differ.
 */
static void compare_globals(const struct hr_dump *dump, const struct hr_image *img, char *why,
			    size_t len)
{
	const struct hr_binary *bin = img->bin;
	unsigned ps = hr_dump_params(dump)->ptr_size;
	size_t checked = 0, differ = 0;
	const struct hr_global *first = NULL;

	for (size_t i = 0; i < hr_binary_global_count(bin); i++) {
		const struct hr_global *g = hr_binary_global(bin, i);
		const struct hr_type *t = hr_binary_type(bin, hr_binary_resolve_typedef(bin, g->type));
		uint64_t at = hr_image_runtime(img, g->addr);
		int bit = segment_ptr_bit(hr_dump_data(dump), at, ps);

		if (bit < 0)
			bit = segment_ptr_bit(hr_dump_bss(dump), at, ps);
		if (bit < 0 || !(t->shape == HR_SHAPE_POINTER ||
				 (t->shape == HR_SHAPE_BASE && t->size == ps)))
			continue;
		checked++;
		if ((t->shape == HR_SHAPE_POINTER) == (bit == 1))
			continue;
		if (!differ++)
			first = g;
	}
	if (differ)
		add_difference(why, len, "%zu of %zu global variables disagree with the dump's "
			       "pointer bitmaps (%s is %sa pointer in the binary)", differ, checked,
			       first->name,
			       hr_binary_type(bin, hr_binary_resolve_typedef(bin, first->type))->shape ==
					       HR_SHAPE_POINTER ? "" : "not ");
}

bool hr_scan_pair_matches(const struct hr_dump *dump, const struct hr_binary *bin, char *why,
			  size_t len)
{
	struct hr_image img;

	if (!len)
		return true;
	why[0] = 0;
	if (hr_scan_image(dump, bin, &img, NULL)) /* a bias that wraps: none, and they differ */
		img = (struct hr_image){ bin, 0 };
	compare_versions(dump, bin, why, len);
	compare_layout(dump, bin, why, len);
	compare_frames(dump, &img, why, len);
	compare_globals(dump, &img, why, len);
	return why[0] == 0;
}

bool hr_scan_go_version_known(const char *version, size_t version_len, char *why, size_t len)
{
	struct hr_bytes v = { (const uint8_t *)version, version_len };
	unsigned minor = layout_go_minor(&v);

	if (!version_len)
		return true; /* not recorded: nothing to warn about */
	if (minor >= HR_GO_MINOR_OLDEST && minor <= HR_GO_MINOR_NEWEST)
		return true;
	snprintf(why, len, "%.*s is %s the Go releases heapref is tested with (go1.%d to go1.%d): "
		 "names may be less precise, the totals stay right (the fallback pass follows "
		 "the GC's bitmaps)",
		 (int)version_len, version,
		 !minor ? "not recognised among" : minor < HR_GO_MINOR_OLDEST ? "older than"
									 : "newer than",
		 HR_GO_MINOR_OLDEST, HR_GO_MINOR_NEWEST);
	return false;
}
