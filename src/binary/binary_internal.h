/* SPDX-License-Identifier: Apache-2.0 */
/*
 * binary_internal.h - what the binary reader's files share: the struct hr_binary
 * itself, the string table, the ELF section list and the location-expression
 * evaluator's interface (binary_loc.c, also used by the unit tests).
 */
#ifndef HEAPREF_BINARY_INTERNAL_H
#define HEAPREF_BINARY_INTERNAL_H

#include <stdlib.h>

#include <gelf.h>
#include <libelf.h>

#include <pthread.h>

#include "heapref/binary.h"

#define VEC(type, name)  \
	type *name;      \
	size_t name##_n; \
	size_t name##_cap
#define VEC_PUSH(owner, name)                                                   \
	hr_array_push((void **)&(owner)->name, &(owner)->name##_n, &(owner)->name##_cap, \
		      sizeof(*(owner)->name))

/* Allocates an empty growable array with room for exactly n items; HR_OK or HR_ENOMEM. */
int bin_array_alloc(void **items, size_t *cap, size_t n, size_t elem_size);
/* Shrinks a growable array to its size (it may stay as it is if realloc() fails). */
void bin_array_shrink(void **items, size_t n, size_t *cap, size_t elem_size);
#define VEC_SHRINK(owner, name)                                                    \
	bin_array_shrink((void **)&(owner)->name, (owner)->name##_n, &(owner)->name##_cap, \
			sizeof(*(owner)->name))

/* qsort() that accepts an empty (possibly NULL) array. */
static inline void hr_sort(void *base, size_t n, size_t size,
			   int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

/* ---- string table: chunks that never move, so handed-out pointers stay valid ---- */
struct strtab {
	char **chunks;
	size_t n;
	size_t cap;
	char *cur;       /* free space in the last chunk */
	size_t left;
	uint64_t bytes;  /* total allocated */
};

/* Copies s[0..len) plus a NUL; NULL when out of memory. */
const char *strtab_add(struct strtab *st, const char *s, size_t len);
void strtab_release(struct strtab *st);

/* ---- location expressions (binary_loc.c) ---- */
struct hr_loc_op {
	uint8_t op;      /* DW_OP_* */
	uint64_t n1;     /* first operand (signed ones stored as two's complement) */
	uint64_t n2;
};

#define HR_LOC_MAX_OPS 1024

/*
 * Decodes a raw DWARF expression into ops (at most max). addr_size is 4 or 8.
 * Returns 0, or HR_EINPUT for a truncated or unknown operation (the message names it).
 */
int hr_loc_decode(const uint8_t *bytes, size_t len, unsigned addr_size, bool big_endian,
		  struct hr_loc_op *ops, size_t max, size_t *count, struct hr_error *err);

/*
 * Evaluates ops symbolically (the CFA is unknown: results are relative to it) into
 * pieces (at most max). An expression heapref cannot evaluate gives one
 * HR_LOC_UNSUPPORTED piece; never fails.
 */
size_t hr_loc_eval(const struct hr_loc_op *ops, size_t count, struct hr_loc_piece *pieces,
		   size_t max);


/* ---- the binary ---- */
struct section {
	const char *name;     /* points into the ELF mapping */
	uint64_t addr;        /* ELF address */
	uint64_t size;
	uint32_t type;        /* SHT_* */
	uint64_t flags;
	Elf_Scn *scn;
	const uint8_t *data;  /* its contents (size bytes), read when the binary is opened;
			       * NULL for SHT_NOBITS or what libelf could not read */
};

struct rt_entry {
	uint64_t offset;      /* DW_AT_go_runtime_type */
	uint32_t id;
};

struct dwarf_state;  /* binary_dwarf.c: libdwarf handle, kept open for lazy loading */
struct func_vars;    /* below: the cached variables of one function */

struct hr_binary {
	char *path;
	int fd;
	Elf *elf;
	bool big_endian;
	unsigned ptr_size;
	uint64_t elf_entry;       /* e_entry, an ELF address */
	bool pie;                 /* ET_DYN: loaded at a bias (struct hr_image) */
	char limits[HR_ERROR_MAX];
	bool has_file;             /* false: hr_binary_none() */

	VEC(struct section, sections);  /* allocated sections sorted by address */
	uint64_t data_addr;             /* ELF address of .data */
	char go_version[64];            /* from .go.buildinfo, "" when unknown */
	char build_id[128];             /* from .note.go.buildid, "" when absent */
	uint64_t debug_info_size;       /* uncompressed; 0 without DWARF */

	VEC(struct hr_symbol, symbols);  /* sorted by address; ELF addresses */
	Elf_Scn *symtab;                 /* .symtab, NULL if none */
	bool has_symtab;
	bool has_runtime_types;
	uint64_t runtime_types;          /* ELF address of runtime.types */

	struct strtab strings;
	/*
	 * The open libdwarf handle, NULL when none is: the eager load opens one (types
	 * view) and closes it before returning; the first function-variable request opens
	 * another (the location lists too), which stays until hr_binary_free().
	 */
	struct dwarf_state *dw;
	bool has_dwarf;
	unsigned dwarf_version;

	/*
	 * DIE offsets are kept in 32 bits: no section may inflate beyond 4 GiB
	 * (MAX_SECTION_BYTES), so every offset into .debug_info fits.
	 */
	VEC(struct hr_type, types);
	VEC(uint32_t, type_offsets);     /* DIE offset of each type id, ascending */
	VEC(struct hr_member, members);
	uint32_t *types_by_name;         /* ids sorted by name */
	VEC(struct rt_entry, rt_index);  /* sorted by runtime type offset */
	VEC(struct hr_global, globals);  /* sorted by address; ELF addresses */
	VEC(struct hr_func, funcs);      /* sorted by low_pc; ELF addresses */
	uint32_t *func_offsets;          /* DIE offset of each function, same order */
	/*
	 * The variables of each function, read the first time they are asked for: the one
	 * state of a binary that changes after it is opened, under vars_lock (pass 1's
	 * threads ask for them at once). A function's entry is set, once, with a release
	 * store; readers load it with acquire before they look at what it points to.
	 */
	struct func_vars **func_vars;    /* allocated with the functions, filled lazily */
	pthread_mutex_t vars_lock;
};

/* binary.c: what is derived from the tables once they are read (binary_dwarf.c, or
 * binary_fixture.c for a binary made by hand) */
/* Gives each typedef without a size or kind of its own those of the type it names. */
void binary_derive_typedefs(struct hr_binary *bin);
/* Sorts the globals by address; builds the runtime-type and name indexes. */
int binary_build_indexes(struct hr_binary *bin, struct hr_error *err);
/* Says in bin->limits what is missing (no DWARF, no symbols, no runtime.types). */
void binary_describe_limits(struct hr_binary *bin);

/* binary_elf.c */
/* Opens the ELF file: header and sections. */
int binary_elf_open(struct hr_binary *bin, const char *path, struct hr_error *err);
/* Reads .symtab (after the DWARF, so that the two are never in memory together). */
int binary_elf_read_symbols(struct hr_binary *bin, struct hr_error *err);
/* Sorts bin->symbols by address (the bigger first at one address), as they are kept. */
void binary_elf_sort_symbols(struct hr_binary *bin);
void binary_elf_close(struct hr_binary *bin);

/* binary_dwarf.c */
int binary_dwarf_load(struct hr_binary *bin, struct hr_error *err);
/* Opens the libdwarf handle for function variables (DWC_VIEW_VARS) unless it is open. */
int binary_dwarf_open_vars(struct hr_binary *bin, struct hr_error *err);
void binary_dwarf_close(struct hr_binary *bin);
/* Maps a DIE offset to a type id, 0 if it is not a type we know. */
uint32_t binary_type_id(const struct hr_binary *bin, uint64_t die_offset);

/* binary_vars.c: the variables of one function, cached in bin->func_vars[] when first
 * asked for (a binary made by hand, binary_fixture.c, fills them in itself) */
/* One entry of a variable's location list: where it is over [low, high), or everywhere. */
struct var_entry {
	uint64_t low, high;  /* ELF addresses, [low, high) */
	bool all_pcs;
	uint32_t first_op;
	uint32_t op_count;
};

/* A parameter or local, its location list at entries[first_entry ..]. */
struct raw_var {
	const char *name;    /* in bin->strings */
	uint32_t type;
	bool is_param;
	bool has_closure;
	uint64_t closure_off;
	bool scoped;         /* only in [scope_lo, scope_hi) */
	uint64_t scope_lo, scope_hi;
	uint32_t first_entry;
	uint32_t entry_count;
};

/* Freed by binary_vars_free() with the binary. */
struct func_vars {
	VEC(struct raw_var, vars);
	VEC(struct var_entry, entries);
	VEC(struct hr_loc_op, ops);
};

/* The lock of the lazily read variables: with the binary, before anything reads them. */
void binary_vars_init(struct hr_binary *bin);
void binary_vars_free(struct hr_binary *bin);
/* hr_binary_describe_var() with every address plus bias (an image's). */
int binary_describe_var(const struct hr_binary *bin, uint64_t bias, size_t index,
			size_t var_index, char *buf, size_t len, struct hr_error *err);

#endif
