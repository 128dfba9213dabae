/* SPDX-License-Identifier: Apache-2.0 */
/*
 * binary.h - the binary reader: stage 2 of the pipeline.
 *
 * Reads the Go executable that wrote a heap dump and answers what the scanner needs
 * to name memory:
 *   - ELF sections (read bytes at a virtual address) and symbols (the symbol that
 *     contains an address, a symbol by name);
 *   - the DWARF types as a table with dense integer ids (id 0 is "void": no type):
 *     Go kind, name as DWARF spells it ("*main.Entry", "[]uint8",
 *     "map[string]*main.Entry"), size, pointer/typedef target, struct members, array
 *     length and element, map key and element, runtime type offset;
 *   - the runtime type behind a type word of an interface (its address minus the
 *     address of the ELF symbol runtime.types is DW_AT_go_runtime_type);
 *   - globals (name as Go writes it, address, type);
 *   - functions sorted by PC, and for a function at a PC its parameters and locals
 *     with the location of each, evaluated at that PC.
 *
 * Addresses: the hr_binary_* calls take and return the ELF file's addresses. A process
 * runs the binary at a load bias (0 unless it is position-independent, PIE): struct
 * hr_image is the binary where one process loaded it, and its hr_image_* calls take and
 * return that process's run-time addresses (ELF address + bias). The binary itself never
 * changes after it is opened, so any number of images, and threads, share it.
 *
 * Lifetime: all names and tables are owned by the struct hr_binary and live until
 * hr_binary_free(). DWARF names are copied into our own string table; ELF symbol
 * names point into the ELF mapping, which also stays until hr_binary_free().
 *
 * Types, members and globals are loaded when the binary is opened; the variables of
 * a function are read from DWARF the first time they are asked for and cached (under a
 * lock of the binary's own: any thread may ask).
 *
 * A binary without DWARF (-ldflags=-w) still opens: hr_binary_has_dwarf() is false
 * and only sections and symbols are there. A binary without symbols (-s -w) opens too,
 * with only sections. hr_binary_limits() says in one sentence what is missing.
 */
#ifndef HEAPREF_BINARY_H
#define HEAPREF_BINARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "heapref/base.h"

/* Go's kinds, numbered as reflect.Kind (the value of DW_AT_go_kind). */
enum hr_kind {
	HR_KIND_INVALID = 0,
	HR_KIND_BOOL = 1,
	HR_KIND_INT = 2,
	HR_KIND_INT8 = 3,
	HR_KIND_INT16 = 4,
	HR_KIND_INT32 = 5,
	HR_KIND_INT64 = 6,
	HR_KIND_UINT = 7,
	HR_KIND_UINT8 = 8,
	HR_KIND_UINT16 = 9,
	HR_KIND_UINT32 = 10,
	HR_KIND_UINT64 = 11,
	HR_KIND_UINTPTR = 12,
	HR_KIND_FLOAT32 = 13,
	HR_KIND_FLOAT64 = 14,
	HR_KIND_COMPLEX64 = 15,
	HR_KIND_COMPLEX128 = 16,
	HR_KIND_ARRAY = 17,
	HR_KIND_CHAN = 18,
	HR_KIND_FUNC = 19,
	HR_KIND_INTERFACE = 20,
	HR_KIND_MAP = 21,
	HR_KIND_PTR = 22,
	HR_KIND_SLICE = 23,
	HR_KIND_STRING = 24,
	HR_KIND_STRUCT = 25,
	HR_KIND_UNSAFE_POINTER = 26,
	HR_KIND_COUNT
};

/* "bool", "int", ..., "unsafe.Pointer"; "invalid" for 0 or unknown values. */
const char *hr_kind_name(unsigned kind);

/* The DWARF shape of a type (from its tag); independent of the Go kind. */
enum hr_shape {
	HR_SHAPE_VOID = 0,   /* id 0 only */
	HR_SHAPE_BASE,       /* DW_TAG_base_type */
	HR_SHAPE_POINTER,    /* DW_TAG_pointer_type: target */
	HR_SHAPE_STRUCT,     /* DW_TAG_structure_type: members */
	HR_SHAPE_ARRAY,      /* DW_TAG_array_type: elem, count */
	HR_SHAPE_TYPEDEF,    /* DW_TAG_typedef: target */
	HR_SHAPE_FUNC,       /* DW_TAG_subroutine_type */
	HR_SHAPE_OTHER,      /* DW_TAG_unspecified_type and anything else */
};

#define HR_TYPE_HAS_RUNTIME_TYPE 0x1 /* runtime_type is valid */
#define HR_TYPE_HAS_COUNT 0x2        /* array: count is known */

struct hr_type {
	const char *name;       /* as DWARF spells it; "" when unnamed */
	uint64_t size;          /* DW_AT_byte_size; pointers: pointer size; 0 unknown */
	uint64_t runtime_type;  /* DW_AT_go_runtime_type: offset from runtime.types */
	uint64_t count;         /* array length */
	uint32_t target;        /* pointer: pointee; typedef: what it names */
	uint32_t elem;          /* array: element; map/chan/slice: DW_AT_go_elem */
	uint32_t key;           /* map: DW_AT_go_key */
	uint32_t first_member;  /* struct: index of its first member in hr_binary_member() */
	uint32_t member_count;
	uint8_t kind;           /* enum hr_kind; from DW_AT_go_kind, else guessed from the tag */
	uint8_t shape;          /* enum hr_shape */
	uint8_t flags;          /* HR_TYPE_* */
};

struct hr_member {
	const char *name;
	uint64_t offset;        /* DW_AT_data_member_location */
	uint32_t type;
	bool embedded;          /* DW_AT_go_embedded_field */
};

struct hr_global {
	const char *name;       /* "main.cache", "net/http.DefaultClient" */
	uint64_t addr;          /* ELF address */
	uint32_t type;
};

struct hr_func {
	const char *name;       /* "main.main", "net/http.(*Client).Do" */
	uint64_t low_pc;        /* ELF addresses, [low_pc, high_pc) */
	uint64_t high_pc;
};

/* ELF symbols of the kinds that name memory (STT_FUNC, STT_OBJECT, STT_NOTYPE). */
struct hr_symbol {
	const char *name;       /* points into the ELF mapping */
	uint64_t addr;          /* ELF address */
	uint64_t size;
	uint8_t type;           /* STT_* */
};

/* One piece of a variable's location at a PC. */
enum hr_loc_kind {
	HR_LOC_NONE = 0,        /* no location at this PC (optimised away, not yet live) */
	HR_LOC_CFA,             /* in memory at CFA + offset (the frame) */
	HR_LOC_ADDR,            /* in memory at a fixed address (offset holds it) */
	HR_LOC_REG,             /* in register reg: unavailable from a heap dump */
	HR_LOC_VALUE,           /* a constant (DW_OP_stack_value): offset holds it */
	HR_LOC_UNSUPPORTED,     /* an expression heapref does not evaluate */
};

struct hr_loc_piece {
	uint8_t kind;           /* enum hr_loc_kind */
	uint16_t reg;           /* DWARF register number for HR_LOC_REG */
	int64_t offset;         /* see enum hr_loc_kind */
	uint64_t size;          /* bytes of the variable this piece covers; 0 = all of it */
};

/* "none", "cfa", "addr", "register", "value", "unsupported". */
const char *hr_loc_kind_name(unsigned kind);
/* Formats a location as "cfa-104", "addr 0x5c9880", "reg0[8] reg3[8]" into buf. */
void hr_loc_format(const struct hr_loc_piece *pieces, size_t count, char *buf, size_t len);

struct hr_var {
	const char *name;       /* owned by the binary */
	uint32_t type;
	bool is_param;
	bool in_scope;          /* false: in a lexical block or inlined call pc is outside of */
	bool has_closure_offset;
	uint64_t closure_offset; /* DW_AT_go_closure_offset: offset in the closure object */
	uint32_t first_piece;   /* into hr_frame_vars.pieces */
	uint32_t piece_count;   /* 1 for a plain location, more for DW_OP_piece composites */
};

/* The variables of one function at one PC; filled by hr_binary_func_vars(). */
struct hr_frame_vars {
	struct hr_var *vars;
	size_t count;
	size_t cap;
	struct hr_loc_piece *pieces;
	size_t piece_count;
	size_t piece_cap;
};

struct hr_binary;

/*
 * Opens the ELF file at path, reads its symbols and, when present, its DWARF types and
 * globals. Returns NULL with err set on failure (HR_EIO: cannot open or read;
 * HR_EINPUT: not a usable ELF file or corrupt DWARF; HR_ENOMEM). The caller owns the
 * result and frees it with hr_binary_free().
 */
struct hr_binary *hr_binary_open(const char *path, struct hr_error *err);
/* The same, calling it name in messages and hr_binary_path() (path: /proc/self/fd/N);
 * without its DWARF unless with_dwarf (a quick look: is it Go, its build ID). */
struct hr_binary *hr_binary_open_as(const char *path, const char *name, bool with_dwarf,
				    struct hr_error *err);
/* The same without reading its DWARF (sections and symbols only), for a binary whose
 * DWARF heapref cannot read: as if built with -ldflags=-w. */
struct hr_binary *hr_binary_open_without_dwarf(const char *path, struct hr_error *err);
/*
 * No binary at all, for a dump whose records name types (go1.3, go1.4): no sections,
 * symbols or DWARF; path "(no binary)". NULL with err set when out of memory.
 */
struct hr_binary *hr_binary_none(struct hr_error *err);
/* False for hr_binary_none(). */
bool hr_binary_has_file(const struct hr_binary *bin);

/* Frees everything; NULL is fine. */
void hr_binary_free(struct hr_binary *bin);

const char *hr_binary_path(const struct hr_binary *bin);
bool hr_binary_has_dwarf(const struct hr_binary *bin);
bool hr_binary_has_symbols(const struct hr_binary *bin);
/* One sentence on what is missing and what analysis can still do; "" when nothing is. */
const char *hr_binary_limits(const struct hr_binary *bin);
/* Highest DWARF version among the compilation units (4 or 5), 0 without DWARF. */
unsigned hr_binary_dwarf_version(const struct hr_binary *bin);
unsigned hr_binary_ptr_size(const struct hr_binary *bin);
/* The Go build ID (as `go tool buildid` prints it), "" when the binary has none. */
const char *hr_binary_build_id(const struct hr_binary *bin);
/* The Go release that built the binary ("go1.26.8"), from .go.buildinfo; "" when unknown. */
const char *hr_binary_go_version(const struct hr_binary *bin);
/* Whether a Go linker wrote the file (it has .gopclntab or .go.buildinfo). */
bool hr_binary_is_go(const struct hr_binary *bin);
/* ELF address and size of the allocated section called name; false if there is none. */
bool hr_binary_section_range(const struct hr_binary *bin, const char *name, uint64_t *addr,
			     uint64_t *size);
/* Uncompressed size of .debug_info, for benchmarks; 0 without DWARF. */
uint64_t hr_binary_debug_info_size(const struct hr_binary *bin);
/* Bytes held by heapref's own tables (not libdwarf's or libelf's), for benchmarks. */
uint64_t hr_binary_table_bytes(const struct hr_binary *bin);
/* The release of the libdwarf heapref was linked with ("20210528", "0.9.2"), for --version. */
const char *hr_binary_libdwarf_version(void);

/* --- load bias (PIE) ----------------------------------------------------------------- */
/* The ELF address of .data, 0 if there is none. */
uint64_t hr_binary_elf_data_addr(const struct hr_binary *bin);
/* The ELF header's entry point (an ELF address): a core's AT_ENTRY minus it is the bias. */
uint64_t hr_binary_elf_entry(const struct hr_binary *bin);
/* Whether the binary is position-independent (ELF type ET_DYN): loaded at a bias. */
bool hr_binary_is_pie(const struct hr_binary *bin);

/* --- memory and symbols -------------------------------------------------------------- */
/*
 * Copies len bytes at address addr from the file's allocated sections into
 * buf. Fails with HR_EINPUT when [addr, addr+len) is not all inside one section with
 * contents in the file (.bss has none).
 */
int hr_binary_read(const struct hr_binary *bin, uint64_t addr, void *buf, size_t len,
		   struct hr_error *err);
/* Name of the allocated section containing addr, or NULL. */
const char *hr_binary_section_at(const struct hr_binary *bin, uint64_t addr);

size_t hr_binary_symbol_count(const struct hr_binary *bin);
/* Symbols sorted by address. */
const struct hr_symbol *hr_binary_symbol(const struct hr_binary *bin, size_t index);
/* The symbol whose [addr, addr+size) contains addr (size 0 symbols: exact match); NULL if none. */
const struct hr_symbol *hr_binary_symbol_at(const struct hr_binary *bin, uint64_t addr);
const struct hr_symbol *hr_binary_find_symbol(const struct hr_binary *bin, const char *name);

/* --- types ----------------------------------------------------------------------------- */
/* Number of ids; valid ids are 0 (void) .. count-1. */
uint32_t hr_binary_type_count(const struct hr_binary *bin);
/* The type with this id; the void type for ids out of range. */
const struct hr_type *hr_binary_type(const struct hr_binary *bin, uint32_t id);
const struct hr_member *hr_binary_member(const struct hr_binary *bin, uint32_t index);
/*
 * The id of the type named name, 0 if none. Go emits a named struct both as the
 * structure and as a typedef of the same name; this returns the structure.
 */
uint32_t hr_binary_find_type(const struct hr_binary *bin, const char *name);
/* Follows typedefs to the type they name (at most 64 steps). */
uint32_t hr_binary_resolve_typedef(const struct hr_binary *bin, uint32_t id);
/* The member of struct id called name, or NULL. */
const struct hr_member *hr_binary_find_member(const struct hr_binary *bin, uint32_t id,
					      const char *name);
/*
 * Where offset off of a value of type falls, as Go would name it from the value: a
 * struct's member (".Prev"), an array's element ("[3]"), and so on inwards
 * (".slots[5].elem"); array: the value is an array of type (a slice's backing array).
 * Into buf (cap bytes, cut there); "" when type is 0 or says nothing. Returns buf.
 */
const char *hr_binary_name_offset(const struct hr_binary *bin, uint32_t type, bool array,
				  uint64_t off, char *buf, size_t cap);
/*
 * The type whose runtime type (an interface's type word, an itab's type) is at address
 * addr; 0 if none or if the binary has no runtime.types symbol.
 */
uint32_t hr_binary_type_by_runtime_addr(const struct hr_binary *bin, uint64_t addr);
/* The address of a type's runtime type, 0 if unknown. */
uint64_t hr_binary_runtime_type_addr(const struct hr_binary *bin, uint32_t id);

/* --- globals ------------------------------------------------------------------------- */
size_t hr_binary_global_count(const struct hr_binary *bin);
/* Globals sorted by address. */
const struct hr_global *hr_binary_global(const struct hr_binary *bin, size_t index);
const struct hr_global *hr_binary_find_global(const struct hr_binary *bin, const char *name);
/* The global whose memory (address .. address + type size) contains addr, or NULL. */
const struct hr_global *hr_binary_global_at(const struct hr_binary *bin, uint64_t addr);

/* --- functions and their variables ----------------------------------------------------- */
size_t hr_binary_func_count(const struct hr_binary *bin);
/* Functions sorted by low_pc. */
const struct hr_func *hr_binary_func(const struct hr_binary *bin, size_t index);
/* Index of the function whose [low_pc, high_pc) contains pc, or -1. O(log n). */
int64_t hr_binary_func_at(const struct hr_binary *bin, uint64_t pc);

/*
 * Fills out (reset first) with the parameters and locals of function index as they are
 * at pc: the location of each is evaluated at pc (location lists pick the entry that
 * covers pc). For a caller frame pass the return PC minus 1. Every variable of the
 * function is listed, in DWARF order, including those of lexical blocks and inlined
 * calls; in_scope is false (and the location "none") for those whose block does not
 * contain pc (blocks given by DW_AT_ranges count as containing every pc of the
 * function). In a heap dump's frame, CFA = frame sp + frame size.
 * out stays owned by the caller: hr_frame_vars_release() frees its arrays.
 */
int hr_binary_func_vars(const struct hr_binary *bin, size_t index, uint64_t pc,
			struct hr_frame_vars *out, struct hr_error *err);

/*
 * Describes the location of variable var_index of function index over the whole
 * function, one line per location list entry ("[0x..., 0x...): cfa-104"), into buf.
 * For listing; returns 0 or a negative HR_E*.
 */
int hr_binary_describe_var(const struct hr_binary *bin, size_t index, size_t var_index,
			   char *buf, size_t len, struct hr_error *err);
/* The number of variables hr_binary_describe_var() knows for function index (loads them). */
int hr_binary_func_var_count(const struct hr_binary *bin, size_t index, size_t *count,
			     struct hr_error *err);

void hr_frame_vars_release(struct hr_frame_vars *vars);

/* --- the binary where a process loaded it: run-time addresses (image.c) ----------------- */

struct hr_image {
	const struct hr_binary *bin;
	uint64_t bias;          /* run-time address = ELF address + bias (modular) */
};

/*
 * The image of bin loaded at bias (a core's entry point less the binary's tells it).
 * HR_EINPUT when some of the binary's addresses would wrap past 2^64 (a corrupt bias).
 */
int hr_image_at(const struct hr_binary *bin, uint64_t bias, struct hr_image *out,
		struct hr_error *err);
/* The image whose .data is at runtime_data_addr (a dump's data segment record). */
int hr_image_from_data(const struct hr_binary *bin, uint64_t runtime_data_addr,
		       struct hr_image *out, struct hr_error *err);

static inline uint64_t hr_image_runtime(const struct hr_image *im, uint64_t elf_addr)
{
	return elf_addr + im->bias;
}

static inline uint64_t hr_image_elf(const struct hr_image *im, uint64_t addr)
{
	return addr - im->bias;
}

/* The hr_binary_* lookups above, at run-time addresses. Structs returned keep their
 * ELF addresses: hr_image_runtime() of them. */
int hr_image_read(const struct hr_image *im, uint64_t addr, void *buf, size_t len,
		  struct hr_error *err);
const char *hr_image_section_at(const struct hr_image *im, uint64_t addr);
const struct hr_symbol *hr_image_symbol_at(const struct hr_image *im, uint64_t addr);
const struct hr_global *hr_image_global_at(const struct hr_image *im, uint64_t addr);
int64_t hr_image_func_at(const struct hr_image *im, uint64_t pc);
uint32_t hr_image_type_by_runtime_addr(const struct hr_image *im, uint64_t addr);
uint64_t hr_image_runtime_type_addr(const struct hr_image *im, uint32_t id);
/* hr_binary_func_vars() at run-time pc: variables at fixed addresses say run-time ones. */
int hr_image_func_vars(const struct hr_image *im, size_t index, uint64_t pc,
		       struct hr_frame_vars *out, struct hr_error *err);
/* hr_binary_describe_var() with run-time addresses. */
int hr_image_describe_var(const struct hr_image *im, size_t index, size_t var_index,
			  char *buf, size_t len, struct hr_error *err);

/* --- the Go function table (.gopclntab), and stacks unwound by it (pclntab.c, unwind.c) --- */

struct hr_pclntab;
/*
 * Reads the function table of the image's binary (section .gopclntab, funcdata base
 * from the go:func.* or go.func.* symbol); its addresses are the image's. NULL with err
 * set (HR_EINPUT naming the magic of a table format this code does not know;
 * HR_ENOMEM). Free it with hr_pclntab_free(); it reads the binary, which must outlive it.
 */
struct hr_pclntab *hr_pclntab_open(const struct hr_image *im, struct hr_error *err);
void hr_pclntab_free(struct hr_pclntab *p);
/* Entry PC and name of the function containing pc; false if none. name points into p. */
bool hr_pclntab_func_at(const struct hr_pclntab *p, uint64_t pc, uint64_t *entry,
			const char **name, size_t *name_len);
/*
 * The source of a PC of a memory-profile bucket's stack: the file and line ("?" and 0
 * when the table has none; a caller's PC, a return address, is first backed up into
 * its call), and the function whose source that is: where the compiler inlined a call
 * there, the innermost function inlined (*inlined true; the runtime has already put its
 * callers in the stack as PCs of their own), else the function holding pc. False when
 * no function holds pc.
 */
bool hr_pclntab_source(const struct hr_pclntab *p, uint64_t pc, bool caller, const char **func,
		       size_t *func_len, const char **file, size_t *file_len, uint64_t *line,
		       bool *inlined);
/*
 * A frame as a heap dump records it (runtime.WriteHeapDump names each PC after the
 * function holding its code, and gives the file and line of the code there, which may
 * be a function inlined into it), and the name hr_pclntab_name_sites() finds for it.
 */
struct hr_pclntab_site {
	const char *func, *file; /* in: as the dump names them */
	size_t func_len, file_len;
	uint64_t line;
	const char *name;        /* out: the function whose code is at file:line, in p */
	size_t name_len;
	bool inlined;            /* out: name was inlined into func there */
	uint64_t tag;            /* the caller's, kept with the site */
};
/*
 * Names each site: the innermost function inlined at a PC of func whose position is
 * file:line, or func itself when code of func's own is there or no PC is (then name is
 * func, inlined false). One pass over the table, whatever the number of sites; sites is
 * reordered. HR_ENOMEM is the only failure.
 */
int hr_pclntab_name_sites(const struct hr_pclntab *p, struct hr_pclntab_site *sites, size_t n,
			  struct hr_error *err);
/* Reads len bytes of the target's memory at addr; 0 on success, non-zero if not readable. */
typedef int (*hr_pclntab_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);
struct hr_pclntab_frame {
	uint64_t sp, fp;          /* frame contents are [sp, fp) as the dump records them */
	uint64_t pc, entry_pc, cont_pc;
	uint64_t child_sp;        /* 0 for the top frame */
	uint64_t depth;           /* 0 = top */
	const char *name;         /* "unknown function" when the runtime would say so */
	size_t name_len;
	const uint64_t *bits;     /* one bit per word of [sp, fp), bit i = word at sp + i *
				   * ptr_size; valid during the callback only */
};
typedef int (*hr_pclntab_frame_fn)(void *ctx, const struct hr_pclntab_frame *f);
/* Unwinds a goroutine from (pc, sp, lr) as runtime.dumpgoroutine does, calling emit for
 * every frame, top first. */
int hr_pclntab_unwind(const struct hr_pclntab *p, hr_pclntab_read_fn read, void *read_ctx,
		      uint64_t pc, uint64_t sp, uint64_t lr, uint64_t stack_hi,
		      hr_pclntab_frame_fn emit, void *emit_ctx, struct hr_error *err);

#endif
