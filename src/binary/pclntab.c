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
 *              pairs from (entry, -1), ended by a zero value delta after the first pair;
 *   inline tree  funcdata 3, indexed by pcdata 2 (-1: the function's own code): one
 *              record per call the compiler inlined, nameOff of the function inlined at
 *              byte 4 of 16 (1.20+: funcID u8, pad, nameOff, parentPc, startLine) or at
 *              byte 12 of 20 (1.18-1.19: parent i16, funcID, pad, file, line, nameOff,
 *              parentPc); offsets into funcnametab.
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
#define PCDATA_INLINE_INDEX 2
#define FUNCDATA_INLINE_TREE 3

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

/* The function of functab entry i (< nfunc) in f; false if its record is out of the table. */
static bool pcln_func_at_index(const struct hr_pclntab *p, uint64_t i, struct pcln_func *f)
{
	uint64_t fo = p->pclntab + u32_at(p, p->pclntab + i * 8 + 4);

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

bool pcln_find(const struct hr_pclntab *p, uint64_t pc, struct pcln_func *f)
{
	uint64_t lo = 0, hi = p->nfunc, off;

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
	return pcln_func_at_index(p, lo, f);
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

const char *pcln_name(const struct hr_pclntab *p, const struct pcln_func *f, size_t *len)
{
	*len = 0;
	if (f->name_off < 0)
		return "";
	return string_at(p, p->funcnametab + (uint64_t)(uint32_t)f->name_off, len);
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

/* A walk over a PC-value table: val holds over [pc, end). */
struct pcln_step {
	uint64_t at;   /* next pair in the table */
	uint64_t pc, end;
	int32_t val;
	bool started;  /* a range has been read: a zero value delta now ends the table */
};

/* The next range of the table; false at its end or where it is corrupt. */
static bool pcln_step_next(const struct hr_pclntab *p, struct pcln_step *st)
{
	uint32_t uv, pcd;

	if (st->at >= p->len || (!p->tab[st->at] && st->started))
		return false;
	if (!uvarint(p, &st->at, &uv) || !uvarint(p, &st->at, &pcd))
		return false;
	st->val += (int32_t)(-(uv & 1) ^ (uv >> 1));
	if (st->started)
		st->pc = st->end;
	st->end = st->pc + (uint64_t)pcd * p->min_lc;
	st->started = true;
	return true;
}

/* Starts a walk over the table at offset table of pctab, at its first range. */
static bool pcln_step_begin(const struct hr_pclntab *p, const struct pcln_func *f, uint32_t table,
			    struct pcln_step *st)
{
	*st = (struct pcln_step){ .at = p->pctab + table, .pc = f->entry, .val = -1 };
	return table && pcln_step_next(p, st);
}

int32_t pcln_value(const struct hr_pclntab *p, const struct pcln_func *f, uint32_t table, uint64_t pc)
{
	struct pcln_step st;

	if (!pcln_step_begin(p, f, table, &st))
		return -1;
	do {
		if (pc < st.end)
			return st.val;
	} while (pcln_step_next(p, &st));
	return -1;
}

/* The offset in pctab of f's PC-value table of pcdata index; 0 if none. */
static uint32_t pcdata_table(const struct hr_pclntab *p, const struct pcln_func *f, uint32_t index)
{
	return index < f->npcdata ? u32_at(p, f->off + p->func_fields + 4 + index * 4) : 0;
}

int32_t pcln_pcdata(const struct hr_pclntab *p, const struct pcln_func *f, uint32_t index, uint64_t pc)
{
	return pcln_value(p, f, pcdata_table(p, f, index), pc);
}

uint64_t pcln_funcdata(const struct hr_pclntab *p, const struct pcln_func *f, uint32_t index)
{
	uint32_t off;

	if (index >= f->nfuncdata || !p->gofunc)
		return 0;
	off = u32_at(p, f->off + p->func_fields + 4 + f->npcdata * 4 + index * 4);
	return off == UINT32_MAX ? 0 : p->gofunc + off;
}

/* The name of file fileno of f's compilation unit; false (and "") if there is none. */
static bool file_name(const struct hr_pclntab *p, const struct pcln_func *f, int32_t fileno,
		      const char **file, size_t *file_len)
{
	uint32_t off;

	*file = "";
	*file_len = 0;
	if (fileno < 0)
		return false;
	off = u32_at(p, p->cutab + ((uint64_t)f->cu_offset + (uint64_t)fileno) * 4);
	if (off == UINT32_MAX)
		return false;
	*file = string_at(p, p->filetab + off, file_len);
	return *file_len > 0;
}

bool pcln_file_line(const struct hr_pclntab *p, const struct pcln_func *f, uint64_t pc,
		    const char **file, size_t *file_len, int32_t *line)
{
	int32_t fileno = pcln_value(p, f, f->pcfile, pc);

	*line = pcln_value(p, f, f->pcln, pc);
	return *line >= 0 && file_name(p, f, fileno, file, file_len);
}

/*
 * The name of the function the compiler inlined as record index of f's inline tree;
 * false if f has no such record. The tree is in the binary's read-only data.
 */
static bool inlined_name(const struct hr_pclntab *p, const struct pcln_func *f, int32_t index,
			 const char **name, size_t *name_len)
{
	uint64_t tree = pcln_funcdata(p, f, FUNCDATA_INLINE_TREE);
	bool old = p->func_fields == 36; /* 1.18-1.19: 20-byte records, nameOff at 12 */
	uint64_t size = old ? 20 : 16, at = old ? 12 : 4;
	struct hr_error ignored = { 0 };
	int32_t name_off;

	if (!tree || index < 0 ||
	    hr_image_read(&p->im, tree + (uint64_t)index * size + at, &name_off, 4, &ignored) ||
	    name_off < 0)
		return false;
	*name = string_at(p, p->funcnametab + (uint64_t)name_off, name_len);
	return *name_len > 0;
}

bool hr_pclntab_source(const struct hr_pclntab *p, uint64_t pc, bool caller, const char **func,
		       size_t *func_len, const char **file, size_t *file_len, uint64_t *line,
		       bool *inlined)
{
	struct pcln_func f;
	int32_t l;

	if (!pcln_find(p, pc, &f))
		return false;
	if (caller && pc > f.entry)
		pc--; /* a return address: the call is the instruction before */
	*inlined = inlined_name(p, &f, pcln_pcdata(p, &f, PCDATA_INLINE_INDEX, pc), func, func_len);
	if (!*inlined)
		*func = pcln_name(p, &f, func_len);
	if (!pcln_file_line(p, &f, pc, file, file_len, &l)) {
		*file = "?";
		*file_len = 1;
		l = 0;
	}
	*line = (uint64_t)l;
	return true;
}

/* --- naming the frames of a heap dump --------------------------------------------------- */

static int cmp_bytes(const char *a, size_t alen, const char *b, size_t blen)
{
	int c = memcmp(a, b, alen < blen ? alen : blen);

	return c ? c : (alen > blen) - (alen < blen);
}

static int cmp_site_func(const void *a, const void *b)
{
	const struct hr_pclntab_site *x = a, *y = b;

	return cmp_bytes(x->func, x->func_len, y->func, y->func_len);
}

/* The first of sites[0, n) (sorted by func) named name, n if none. */
static size_t first_site_of(const struct hr_pclntab_site *sites, size_t n, const char *name,
			    size_t len)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cmp_bytes(sites[mid].func, sites[mid].func_len, name, len) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

enum site_state { SITE_UNSEEN, SITE_INLINED, SITE_OWN };

/* Where code of f at one line, file and inline record matches a site, names it. */
static void match_sites(const struct hr_pclntab *p, const struct pcln_func *f, int32_t line,
			int32_t fileno, int32_t inl, struct hr_pclntab_site *s, uint8_t *state,
			size_t k)
{
	const char *file = NULL;
	size_t file_len = 0;

	for (size_t j = 0; j < k; j++) {
		if (state[j] == SITE_OWN || (uint64_t)line != s[j].line || line < 0)
			continue;
		if (!file && !file_name(p, f, fileno, &file, &file_len))
			return;
		if (cmp_bytes(file, file_len, s[j].file, s[j].file_len))
			continue;
		if (inl < 0) {
			state[j] = SITE_OWN; /* func's own code: its name stays */
			s[j].name = s[j].func;
			s[j].name_len = s[j].func_len;
			s[j].inlined = false;
		} else if (state[j] == SITE_UNSEEN &&
			   inlined_name(p, f, inl, &s[j].name, &s[j].name_len)) {
			state[j] = SITE_INLINED;
			s[j].inlined = true;
		}
	}
}

/*
 * Names the k sites of function f: one walk over its line, file and inline-index
 * tables together, in ranges where all three are constant.
 */
static void name_sites_of(const struct hr_pclntab *p, const struct pcln_func *f,
			  struct hr_pclntab_site *s, uint8_t *state, size_t k)
{
	struct pcln_step line, file, inl;
	bool has_inl = pcln_step_begin(p, f, pcdata_table(p, f, PCDATA_INLINE_INDEX), &inl);

	if (!has_inl) /* no inline tree: the function's own code everywhere */
		inl = (struct pcln_step){ .pc = f->entry, .end = UINT64_MAX, .val = -1 };
	if (!pcln_step_begin(p, f, f->pcln, &line) || !pcln_step_begin(p, f, f->pcfile, &file))
		return;
	for (;;) {
		uint64_t end = line.end < file.end ? line.end : file.end;

		end = end < inl.end ? end : inl.end;
		match_sites(p, f, line.val, file.val, inl.val, s, state, k);
		if ((line.end == end && !pcln_step_next(p, &line)) ||
		    (file.end == end && !pcln_step_next(p, &file)) ||
		    (inl.end == end && (!has_inl || !pcln_step_next(p, &inl))))
			return;
	}
}

int hr_pclntab_name_sites(const struct hr_pclntab *p, struct hr_pclntab_site *sites, size_t n,
			  struct hr_error *err)
{
	uint8_t *state;

	for (size_t i = 0; i < n; i++) {
		sites[i].name = sites[i].func;
		sites[i].name_len = sites[i].func_len;
		sites[i].inlined = false;
	}
	if (!n)
		return HR_OK;
	state = calloc(n, 1);
	if (!state)
		return hr_error_set(err, HR_ENOMEM, "out of memory");
	qsort(sites, n, sizeof(*sites), cmp_site_func);
	for (uint64_t i = 0; i < p->nfunc; i++) {
		struct pcln_func f;
		const char *name;
		size_t len, lo, hi;

		if (!pcln_func_at_index(p, i, &f))
			continue;
		name = pcln_name(p, &f, &len);
		lo = first_site_of(sites, n, name, len);
		for (hi = lo; hi < n && !cmp_bytes(sites[hi].func, sites[hi].func_len, name, len);)
			hi++;
		if (hi > lo)
			name_sites_of(p, &f, sites + lo, state + lo, hi - lo);
	}
	free(state);
	return HR_OK;
}
