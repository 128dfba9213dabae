/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pclntab.c - the Go function table of a binary (.gopclntab), read from the binary file:
 * which function holds a PC, its name, and the values of its PC-value tables (frame
 * size, stack map index) and its funcdata (stack maps) at a PC.
 *
 * Layout, Go 1.19 to 1.27 (magic 0xfffffff0 for 1.18-1.19, 0xfffffff1 from 1.20):
 *   pcHeader   magic u32, pad u8 u8, minLC u8, ptrSize u8, nfunc, nfiles, textStart
 *              (1.18-1.20; unused since), then the offsets from the header of funcnametab,
 *              cutab, filetab, pctab and pclntab, pointer-sized each;
 *   pclntab    functab: nfunc + 1 pairs {entry offset from runtime.text u32, offset of
 *              the _func from pclntab u32}, sorted; then the _func records:
 *   _func      entryOff u32, nameOff i32, args i32, deferreturn u32, pcsp u32, pcfile u32,
 *              pcln u32, npcdata u32, cuOffset u32, [startLine i32 from 1.20], funcID u8,
 *              flag u8, pad u8, nfuncdata u8; then npcdata u32 offsets of PC-value tables
 *              in pctab and nfuncdata u32 offsets from go:func.* (go.func.* before 1.20;
 *              ~0: none);
 *   pctab      PC-value tables: (value delta zig-zag varint, PC delta varint * minLC)
 *              pairs from (entry, -1), ended by a zero value delta after the first pair.
 *
 * Every offset read from the table is checked against the section before it is used: a
 * corrupt table yields "no function" or no value, never a read outside it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pclntab_internal.h"

#define MAGIC_118 0xfffffff0u
#define MAGIC_120 0xfffffff1u

static uint32_t u32_at(const struct hr_pclntab *p, uint64_t off)
{
	uint32_t v;

	if (off > p->len || p->len - off < 4)
		return 0;
	memcpy(&v, p->tab + off, 4);
	return v;
}

static uint64_t word_at(const struct hr_pclntab *p, uint64_t off)
{
	uint64_t v = 0;

	if (off > p->len || p->len - off < p->ptr_size)
		return 0;
	memcpy(&v, p->tab + off, p->ptr_size);
	return v;
}

static int bad_table(const struct hr_binary *bin, const char *what, struct hr_error *err)
{
	return hr_error_set(err, HR_EINPUT, "%s: .gopclntab: %s", hr_binary_path(bin), what);
}

/*
 * Where the table is: its section, or, where the linker put it inside another section
 * (PIE binaries of Go before 1.21: .data.rel.ro), between runtime.pclntab and
 * runtime.epclntab. An ELF address.
 */
static bool table_range(const struct hr_binary *bin, uint64_t *addr, uint64_t *size)
{
	const struct hr_symbol *start = hr_binary_find_symbol(bin, "runtime.pclntab");
	const struct hr_symbol *end = hr_binary_find_symbol(bin, "runtime.epclntab");

	if (hr_binary_section_range(bin, ".gopclntab", addr, size))
		return true;
	if (!start || !end || end->addr <= start->addr)
		return false;
	*addr = start->addr;
	*size = end->addr - start->addr;
	return true;
}

static int read_section(struct hr_pclntab *p, const struct hr_binary *bin, struct hr_error *err)
{
	uint64_t addr, size;

	if (!table_range(bin, &addr, &size) || size < 64)
		return bad_table(bin, "missing or too small", err);
	if (size > (UINT64_C(1) << 32))
		return bad_table(bin, "larger than 4 GiB", err);
	p->tab = malloc((size_t)size);
	if (!p->tab)
		return hr_error_set(err, HR_ENOMEM, "out of memory");
	p->len = size;
	if (hr_binary_read(bin, addr, p->tab, (size_t)size, err))
		return err->code;
	return HR_OK;
}

/* runtime.text, and the funcdata base go:func.* (go.func.* before Go 1.20). */
static int read_bases(struct hr_pclntab *p, const struct hr_binary *bin, struct hr_error *err)
{
	const struct hr_symbol *text = hr_binary_find_symbol(bin, "runtime.text");
	const struct hr_symbol *gofunc = hr_binary_find_symbol(bin, "go:func.*");
	uint64_t addr, size;

	if (!gofunc)
		gofunc = hr_binary_find_symbol(bin, "go.func.*");
	if (text)
		p->text = hr_image_runtime(&p->im, text->addr);
	else if (hr_binary_section_range(bin, ".text", &addr, &size))
		p->text = hr_image_runtime(&p->im, addr);
	else
		return bad_table(bin, "no runtime.text symbol nor .text section", err);
	p->gofunc = gofunc ? hr_image_runtime(&p->im, gofunc->addr) : 0;
	return HR_OK;
}

static int read_header(struct hr_pclntab *p, const struct hr_binary *bin, struct hr_error *err)
{
	uint32_t magic = u32_at(p, 0);
	uint64_t ps, fields;
	char what[96];

	if (magic != MAGIC_118 && magic != MAGIC_120) {
		snprintf(what, sizeof(what), "magic 0x%08" PRIx32 " is not one of Go 1.18 to 1.27 "
			 "(0xfffffff0, 0xfffffff1)", magic);
		return bad_table(bin, what, err);
	}
	p->func_fields = magic == MAGIC_118 ? 36 : 40; /* where funcID is: startLine from 1.20 */
	p->min_lc = p->tab[6];
	ps = p->tab[7];
	if ((ps != 4 && ps != 8) || !p->min_lc)
		return bad_table(bin, "bad pointer size or instruction size", err);
	p->ptr_size = (uint32_t)ps;
	fields = 8 + 3 * ps; /* magic..ptrSize, nfunc, nfiles, textStart */
	p->nfunc = word_at(p, 8);
	p->funcnametab = word_at(p, fields);
	p->cutab = word_at(p, fields + ps);
	p->filetab = word_at(p, fields + 2 * ps);
	p->pctab = word_at(p, fields + 3 * ps);
	p->pclntab = word_at(p, fields + 4 * ps);
	if (p->funcnametab >= p->len || p->pctab >= p->len || p->pclntab >= p->len ||
	    p->len - p->pclntab < 16 || p->nfunc > (p->len - p->pclntab) / 8 - 1)
		return bad_table(bin, "offsets or function count past its end", err);
	return HR_OK;
}

struct hr_pclntab *hr_pclntab_open(const struct hr_image *im, struct hr_error *err)
{
	const struct hr_binary *bin = im->bin;
	struct hr_pclntab *p = calloc(1, sizeof(*p));

	if (!p) {
		hr_error_set(err, HR_ENOMEM, "out of memory");
		return NULL;
	}
	p->im = *im;
	if (read_section(p, bin, err) || read_header(p, bin, err) ||
	    read_bases(p, bin, err)) {
		hr_pclntab_free(p);
		return NULL;
	}
	return p;
}

void hr_pclntab_free(struct hr_pclntab *p)
{
	if (!p)
		return;
	free(p->tab);
	free(p);
}

/* functab entry i: {entry offset, _func offset}. */
static uint32_t ftab_entry(const struct hr_pclntab *p, uint64_t i)
{
	return u32_at(p, p->pclntab + i * 8);
}

bool pcln_find(const struct hr_pclntab *p, uint64_t pc, struct pcln_func *f)
{
	uint64_t lo = 0, hi = p->nfunc, off, fo;

	if (pc < p->text || !p->nfunc)
		return false;
	off = pc - p->text;
	if (off >= ftab_entry(p, p->nfunc)) /* the last entry is the end of text */
		return false;
	while (hi - lo > 1) { /* the last entry with entry offset <= off */
		uint64_t mid = lo + (hi - lo) / 2;

		if (ftab_entry(p, mid) <= off)
			lo = mid;
		else
			hi = mid;
	}
	if (ftab_entry(p, lo) > off)
		return false;
	fo = p->pclntab + u32_at(p, p->pclntab + lo * 8 + 4);
	if (fo > p->len || p->len - fo < p->func_fields + 4)
		return false;
	f->off = fo;
	f->entry = p->text + u32_at(p, fo);
	f->args = (int32_t)u32_at(p, fo + 8);
	f->deferreturn = u32_at(p, fo + 12);
	f->pcsp = u32_at(p, fo + 16);
	f->pcfile = u32_at(p, fo + 20);
	f->pcln = u32_at(p, fo + 24);
	f->cu_offset = u32_at(p, fo + 32);
	f->npcdata = u32_at(p, fo + 28);
	f->func_id = p->tab[fo + p->func_fields];
	f->flag = p->tab[fo + p->func_fields + 1];
	f->nfuncdata = p->tab[fo + p->func_fields + 3];
	f->name_off = (int32_t)u32_at(p, fo + 4);
	return true;
}

const char *pcln_name(const struct hr_pclntab *p, const struct pcln_func *f, size_t *len)
{
	uint64_t at = p->funcnametab + (uint64_t)(uint32_t)f->name_off;
	const char *s, *end;

	*len = 0;
	if (f->name_off < 0 || at >= p->len)
		return "";
	s = (const char *)p->tab + at;
	end = memchr(s, 0, (size_t)(p->len - at));
	*len = end ? (size_t)(end - s) : 0;
	return end ? s : "";
}

bool hr_pclntab_func_at(const struct hr_pclntab *p, uint64_t pc, uint64_t *entry, const char **name,
		  size_t *name_len)
{
	struct pcln_func f;

	if (!pcln_find(p, pc, &f))
		return false;
	*entry = f.entry;
	*name = pcln_name(p, &f, name_len);
	return true;
}

static bool uvarint(const struct hr_pclntab *p, uint64_t *at, uint32_t *v)
{
	uint32_t x = 0;

	for (unsigned shift = 0; shift < 35; shift += 7) {
		uint8_t b;

		if (*at >= p->len)
			return false;
		b = p->tab[(*at)++];
		x |= (uint32_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = x;
			return true;
		}
	}
	return false;
}

int32_t pcln_value(const struct hr_pclntab *p, const struct pcln_func *f, uint32_t table, uint64_t pc)
{
	uint64_t at = p->pctab + table, cur = f->entry;
	int32_t val = -1;

	if (!table)
		return -1;
	for (bool first = true;; first = false) {
		uint32_t uv, pcd;

		if (at >= p->len || (!p->tab[at] && !first))
			return -1;
		if (!uvarint(p, &at, &uv) || !uvarint(p, &at, &pcd))
			return -1;
		val += (int32_t)(-(uv & 1) ^ (uv >> 1));
		cur += (uint64_t)pcd * p->min_lc;
		if (pc < cur)
			return val;
	}
}

int32_t pcln_pcdata(const struct hr_pclntab *p, const struct pcln_func *f, uint32_t index, uint64_t pc)
{
	if (index >= f->npcdata)
		return -1;
	return pcln_value(p, f, u32_at(p, f->off + p->func_fields + 4 + index * 4), pc);
}

uint64_t pcln_funcdata(const struct hr_pclntab *p, const struct pcln_func *f, uint32_t index)
{
	uint32_t off;

	if (index >= f->nfuncdata || !p->gofunc)
		return 0;
	off = u32_at(p, f->off + p->func_fields + 4 + f->npcdata * 4 + index * 4);
	return off == UINT32_MAX ? 0 : p->gofunc + off;
}

/* A NUL-terminated string at offset at of the table; "" when there is none. */
static const char *string_at(const struct hr_pclntab *p, uint64_t at, size_t *len)
{
	const char *s, *end;

	*len = 0;
	if (at >= p->len)
		return "";
	s = (const char *)p->tab + at;
	end = memchr(s, 0, (size_t)(p->len - at));
	*len = end ? (size_t)(end - s) : 0;
	return end ? s : "";
}

bool pcln_file_line(const struct hr_pclntab *p, const struct pcln_func *f, uint64_t pc,
		    const char **file, size_t *file_len, int32_t *line)
{
	int32_t fileno = pcln_value(p, f, f->pcfile, pc);
	uint32_t off;

	*line = pcln_value(p, f, f->pcln, pc);
	if (fileno < 0 || *line < 0)
		return false;
	off = u32_at(p, p->cutab + ((uint64_t)f->cu_offset + (uint64_t)fileno) * 4);
	if (off == UINT32_MAX)
		return false;
	*file = string_at(p, p->filetab + off, file_len);
	return *file_len > 0;
}

bool hr_pclntab_source(const struct hr_pclntab *p, uint64_t pc, bool caller, const char **func,
		 size_t *func_len, const char **file, size_t *file_len, uint64_t *line)
{
	struct pcln_func f;
	int32_t l;

	if (!pcln_find(p, pc, &f))
		return false;
	*func = pcln_name(p, &f, func_len);
	if (caller && pc > f.entry)
		pc--; /* a return address: the call is the instruction before */
	if (!pcln_file_line(p, &f, pc, file, file_len, &l)) {
		*file = "?";
		*file_len = 1;
		l = 0;
	}
	*line = (uint64_t)l;
	return true;
}
