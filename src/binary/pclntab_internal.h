/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pclntab_internal.h - the function table's structures, shared by pclntab.c (the table)
 * and unwind.c (frames as a heap dump records them).
 */
#ifndef HEAPREF_BINARY_PCLNTAB_INTERNAL_H
#define HEAPREF_BINARY_PCLNTAB_INTERNAL_H

#include "heapref/binary.h"

struct hr_pclntab {
	struct hr_image im;          /* for funcdata (stack maps), in its read-only data */
	uint8_t *tab;                /* a copy of .gopclntab */
	uint64_t len;
	uint32_t ptr_size;
	uint32_t min_lc;             /* instruction size quantum of PC deltas */
	uint32_t func_fields;        /* offset of funcID in a _func: 36 (1.18-1.19), 40 (1.20+) */
	uint64_t nfunc;
	uint64_t funcnametab, cutab, filetab, pctab, pclntab; /* offsets in tab */
	uint64_t text;               /* run-time address of runtime.text */
	uint64_t gofunc;             /* run-time address of go:func.*, 0 if none */
};

/* One function's record, decoded. */
struct pcln_func {
	uint64_t off;    /* of its _func in tab */
	uint64_t entry;  /* run-time address */
	int32_t args;
	int32_t name_off;
	uint32_t deferreturn;
	uint32_t pcsp, pcfile, pcln;
	uint32_t cu_offset;
	uint32_t npcdata;
	uint8_t func_id;
	uint8_t flag;
	uint8_t nfuncdata;
};

#define PCLN_FLAG_TOPFRAME 0x1
#define PCLN_FLAG_SPWRITE 0x2
#define PCLN_PCDATA_STACKMAP 1
#define PCLN_FUNCDATA_ARGS 0
#define PCLN_FUNCDATA_LOCALS 1
#define PCLN_ARGS_UNKNOWN INT32_MIN

bool pcln_find(const struct hr_pclntab *p, uint64_t pc, struct pcln_func *f);
const char *pcln_name(const struct hr_pclntab *p, const struct pcln_func *f, size_t *len);
/* The value of the PC-value table at offset table of pctab at pc; -1 if none. */
int32_t pcln_value(const struct hr_pclntab *p, const struct pcln_func *f, uint32_t table, uint64_t pc);
int32_t pcln_pcdata(const struct hr_pclntab *p, const struct pcln_func *f, uint32_t index, uint64_t pc);
/* The source file and line of pc in f, as runtime.funcline gives them; false: "?", 0. */
bool pcln_file_line(const struct hr_pclntab *p, const struct pcln_func *f, uint64_t pc,
		    const char **file, size_t *file_len, int32_t *line);
/* Run-time address of funcdata index, 0 if none. */
uint64_t pcln_funcdata(const struct hr_pclntab *p, const struct pcln_func *f, uint32_t index);

#endif
