/* SPDX-License-Identifier: Apache-2.0 */
/*
 * binary_fixture.h - a struct hr_binary made by hand, for the unit tests: the DWARF
 * type table, globals, ELF symbols and functions with their variables that
 * hr_binary_open() reads from a Go binary, without a file, ELF or libdwarf. Everything
 * binary.h answers (types by id, name and runtime type, globals by address, symbols,
 * functions and their variables at a PC) then answers from what the test put in, so
 * the scanner and the writers can run on a hand-made heap dump.
 *
 * Not part of heapref: compiled only into the test library heapref_binary_fixture
 * (tests/CMakeLists.txt). Internal to the binary module, like binary_internal.h.
 *
 * Use: binary_fixture_new(), the adders, binary_fixture_finish(), which does what the
 * loader does once its tables are read (typedef sizes and kinds from what they name,
 * symbols and globals sorted by address, the name and runtime-type indexes, the
 * limits line) and hands over the binary, to be freed with hr_binary_free(). An adder
 * that fails (out of memory, or a use this header rules out) keeps the first failure;
 * binary_fixture_finish() reports it and returns NULL.
 *
 * What the binary is: it has DWARF (version 5) and symbols, but no file
 * (hr_binary_has_file() false, so the scan sets no load bias: every address is a
 * run-time address), no ELF sections (hr_binary_read() fails: an itab's type must
 * come from the dump's itab records) and no build ID. A variable is at one CFA offset
 * at every PC of its function: no location lists, pieces, registers, lexical blocks
 * or closure offsets. Names are written as Go's DWARF spells them; which members and
 * type names the scanner's layouts need (runtime.eface, hash<K,V>, ...) is the
 * test's business.
 */
#ifndef HEAPREF_BINARY_FIXTURE_H
#define HEAPREF_BINARY_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>

#include "heapref/binary.h"

struct binary_fixture;

/*
 * An empty binary with ptr_size-byte pointers (4 or 8) built by go_version
 * ("go1.23.12": hr_binary_go_version() returns it, and hr_binary_is_go() is true);
 * only the void type, id 0. NULL when out of memory.
 */
struct binary_fixture *binary_fixture_new(unsigned ptr_size, const char *go_version);

/*
 * Appends a type like t and returns its id (1, 2, ... in the order added), 0 on
 * failure. Taken from t: name (copied; "" for none), kind, shape, size (0 for a
 * pointer is the pointer size; 0 for a typedef is the size of what it names),
 * runtime_type with HR_TYPE_HAS_RUNTIME_TYPE in flags, count with HR_TYPE_HAS_COUNT,
 * target (pointers, typedefs), elem (arrays, slices, maps, channels) and key (maps):
 * ids, possibly of types added later. first_member and member_count are ignored:
 * binary_fixture_member() sets them.
 */
uint32_t binary_fixture_type(struct binary_fixture *fx, const struct hr_type *t);

/*
 * Appends a member (name copied) at offset to struct struct_id (shape
 * HR_SHAPE_STRUCT). Structs may get their members in any order, between other
 * structs' and types: binary_fixture_finish() puts each struct's together, in the
 * order they were added.
 */
void binary_fixture_member(struct binary_fixture *fx, uint32_t struct_id, const char *name,
			   uint64_t offset, uint32_t type);

/* A global variable (name copied) at run-time address addr, of type. */
void binary_fixture_global(struct binary_fixture *fx, const char *name, uint64_t addr,
			   uint32_t type);

/*
 * An ELF data symbol (STT_OBJECT; name copied): it names data and bss words outside
 * every global. The one called "runtime.types" says where the runtime types are: a
 * type word A names the type whose runtime_type is A - addr.
 */
void binary_fixture_symbol(struct binary_fixture *fx, const char *name, uint64_t addr,
			   uint64_t size);

/*
 * A function (name copied) over [low_pc, high_pc). Functions are added in address
 * order and do not overlap. No symbol is made for it.
 */
void binary_fixture_func(struct binary_fixture *fx, const char *name, uint64_t low_pc,
			 uint64_t high_pc);

/*
 * A parameter or local (name copied) of type of the function added last, in memory at
 * CFA + cfa_offset (DW_OP_fbreg) at every PC of the function.
 */
void binary_fixture_var(struct binary_fixture *fx, const char *name, uint32_t type,
			bool is_param, int64_t cfa_offset);

/*
 * Checks that every type id given refers to a type, derives and indexes as the loader
 * does, frees fx and returns the binary (the caller frees it with hr_binary_free()).
 * NULL with err set (HR_ENOMEM, HR_EUSAGE) if an adder failed or an id is out of range;
 * fx is freed either way.
 */
struct hr_binary *binary_fixture_finish(struct binary_fixture *fx, struct hr_error *err);

#endif
