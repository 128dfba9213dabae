/*
 * pcln.h - the Go function table (.gopclntab) of a binary, and unwinding a goroutine's
 * stack into frames as runtime.WriteHeapDump records them.
 */
#ifndef HEAPREF_CORE_PCLN_H
#define HEAPREF_CORE_PCLN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "heapref/base.h"
#include "heapref/binary.h"

struct pcln;
/* Reads the function table of bin (section .gopclntab, funcdata base from the go:func.* or go.func.* symbol).
   bias: added to every address of the table (PIE); 0 otherwise. HR_EINPUT with a clear message if the table's
   format is one this code does not know (name the magic). */
int pcln_open(const struct hr_binary *bin, uint64_t bias, struct pcln **out, struct hr_error *err);
void pcln_free(struct pcln *p);
/* Entry PC and name of the function containing pc; false if none. name points into memory owned by p. */
bool pcln_func_at(const struct pcln *p, uint64_t pc, uint64_t *entry, const char **name, size_t *name_len);
/*
 * What runtime.WriteHeapDump writes for a PC of a memory-profile bucket's stack: the
 * function, and the file and line ("?" and 0 when the table has none; a caller's PC,
 * a return address, is first backed up into its call). False when no function holds pc.
 */
bool pcln_source(const struct pcln *p, uint64_t pc, bool caller, const char **func,
		 size_t *func_len, const char **file, size_t *file_len, uint64_t *line);
/* Reads len bytes of the target's memory at addr; 0 on success, non-zero if not readable. */
typedef int (*pcln_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);
struct pcln_frame {
	uint64_t sp, fp;          /* frame contents are [sp, fp) as the dump records them */
	uint64_t pc, entry_pc, cont_pc;
	uint64_t child_sp;        /* 0 for the top frame */
	uint64_t depth;           /* 0 = top */
	const char *name; size_t name_len;   /* "unknown function" when the runtime would say so */
	const uint64_t *bits;     /* one bit per word of [sp, fp), bit i = word at sp + i*ptr_size; valid during the callback only */
};
typedef int (*pcln_frame_fn)(void *ctx, const struct pcln_frame *f);
/* Unwinds a goroutine from (pc, sp, lr) as runtime.dumpgoroutine does, calling emit for every frame top first. */
int pcln_unwind(const struct pcln *p, pcln_read_fn read, void *read_ctx, uint64_t pc, uint64_t sp, uint64_t lr,
		uint64_t stack_hi, pcln_frame_fn emit, void *emit_ctx, struct hr_error *err);

#endif
