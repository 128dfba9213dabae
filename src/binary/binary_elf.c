/* SPDX-License-Identifier: Apache-2.0 */
/*
 * binary_elf.c - the ELF side of the binary reader, through libelf: the allocated
 * sections (to read memory at a virtual address), the symbol table (sorted by
 * address) and the address of runtime.types.
 *
 * The ELF file is hostile input: libelf checks the headers it parses; we check that
 * section ranges do not wrap and we never trust a size without comparing it with the
 * data libelf handed out. Symbol names point into the Elf's read-only mapping.
 *
 * Memory: the file is mapped (ELF_C_READ_MMAP), and only the pages touched count in
 * the resident set: the section headers, .symtab while the symbols are copied out
 * (its pages are then dropped from the mapping again, see drop_pages()), .strtab (the
 * symbol names stay in it) and whatever hr_binary_read() reads. The DWARF sections
 * are not read through this mapping at all (dwarf_compat.c reads them with pread()).
 */
/* madvise() and MADV_DONTNEED are not POSIX (posix_madvise()'s DONTNEED is a no-op in glibc) */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "binary_internal.h"

static int fail_elf(struct hr_binary *bin, struct hr_error *err, const char *what)
{
	return hr_error_set(err, HR_EINPUT, "%s: %s: %s", bin->path, what, elf_errmsg(-1));
}

static int cmp_section(const void *a, const void *b)
{
	const struct section *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int cmp_symbol(const void *a, const void *b)
{
	const struct hr_symbol *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->size > y->size ? -1 : x->size < y->size; /* bigger first at one address */
}

void binary_elf_sort_symbols(struct hr_binary *bin)
{
	hr_sort(bin->symbols, bin->symbols_n, sizeof(*bin->symbols), cmp_symbol);
}

static int add_section(struct hr_binary *bin, Elf_Scn *scn, const GElf_Shdr *sh,
		       const char *name, struct hr_error *err)
{
	struct section *s;
	uint64_t end;

	if (!hr_add_ok(sh->sh_addr, sh->sh_size, &end))
		return hr_error_set(err, HR_EINPUT, "%s: section %s: address 0x%" PRIx64
				    " + size 0x%" PRIx64 " wraps around", bin->path, name,
				    (uint64_t)sh->sh_addr, (uint64_t)sh->sh_size);
	s = VEC_PUSH(bin, sections);
	if (!s)
		return hr_error_set(err, HR_ENOMEM, "%s: out of memory", bin->path);
	s->name = name;
	s->addr = sh->sh_addr;
	s->size = sh->sh_size;
	s->type = sh->sh_type;
	s->flags = sh->sh_flags;
	s->scn = scn;
	s->data = NULL;
	if (sh->sh_type != SHT_NOBITS) { /* now: libelf reads a section's data on first use */
		Elf_Data *d = elf_getdata(scn, NULL);

		if (d && d->d_buf && d->d_size >= s->size)
			s->data = d->d_buf;
	}
	return HR_OK;
}

/* Records one section header: allocated ones for reading, and the few we look for. */
static int note_section(struct hr_binary *bin, Elf_Scn *scn, size_t shstrndx,
			struct hr_error *err)
{
	GElf_Shdr sh;
	const char *name;

	if (!gelf_getshdr(scn, &sh))
		return fail_elf(bin, err, "cannot read a section header");
	name = elf_strptr(bin->elf, shstrndx, sh.sh_name);
	if (!name)
		name = "";
	if (sh.sh_type == SHT_SYMTAB)
		bin->symtab = scn;
	if (!strcmp(name, ".data"))
		bin->data_addr = sh.sh_addr;
	if ((sh.sh_flags & SHF_ALLOC) && sh.sh_size > 0)
		return add_section(bin, scn, &sh, name, err);
	return HR_OK;
}

static int read_sections(struct hr_binary *bin, struct hr_error *err)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	int rc;

	if (elf_getshdrstrndx(bin->elf, &shstrndx) < 0)
		return fail_elf(bin, err, "cannot find the section names");
	while ((scn = elf_nextscn(bin->elf, scn)) != NULL) {
		rc = note_section(bin, scn, shstrndx, err);
		if (rc)
			return rc;
	}
	hr_sort(bin->sections, bin->sections_n, sizeof(*bin->sections), cmp_section);
	return HR_OK;
}

static bool wanted_symbol(const GElf_Sym *sym, const char *name)
{
	unsigned type = GELF_ST_TYPE(sym->st_info);

	if (!name || !name[0] || sym->st_shndx == SHN_UNDEF || sym->st_value == 0)
		return false;
	return type == STT_FUNC || type == STT_OBJECT || type == STT_NOTYPE || type == STT_TLS;
}

/*
 * Drops the pages of [off, off + size) of the file from our mapping of it (they are
 * read again from the page cache if touched again): for sections copied out once.
 */
static void drop_pages(struct hr_binary *bin, uint64_t off, uint64_t size)
{
	size_t file_len = 0;
	char *base = elf_rawfile(bin->elf, &file_len);
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t start, end;

	if (!base || page <= 0 || off > file_len || size > file_len - off)
		return;
	start = ((uintptr_t)base + off + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
	end = ((uintptr_t)base + off + size) & ~((uintptr_t)page - 1);
	if (end > start)
		(void)madvise((void *)start, end - start, MADV_DONTNEED);
}

int binary_elf_read_symbols(struct hr_binary *bin, struct hr_error *err)
{
	Elf_Scn *scn = bin->symtab;
	GElf_Shdr sh;
	Elf_Data *data;
	size_t count, wanted = 0;

	if (!scn)
		return HR_OK;
	if (!gelf_getshdr(scn, &sh) || !(data = elf_getdata(scn, NULL)))
		return fail_elf(bin, err, "cannot read the symbol table");
	if (sh.sh_entsize == 0)
		return hr_error_set(err, HR_EINPUT, "%s: symbol table entry size is 0", bin->path);
	count = data->d_size / sh.sh_entsize;
	/* two passes, so that the array has exactly the size it needs */
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1 && bin_array_alloc((void **)&bin->symbols, &bin->symbols_cap, wanted,
						 sizeof(*bin->symbols)))
			return hr_error_set(err, HR_ENOMEM, "%s: out of memory", bin->path);
		for (size_t i = 1; i < count; i++) {
			GElf_Sym sym;
			const char *name;
			struct hr_symbol *s;

			if (!gelf_getsym(data, (int)i, &sym))
				return fail_elf(bin, err, "cannot read a symbol");
			name = elf_strptr(bin->elf, sh.sh_link, sym.st_name);
			if (!wanted_symbol(&sym, name))
				continue;
			if (pass == 0) {
				wanted++;
				continue;
			}
			s = VEC_PUSH(bin, symbols);
			if (!s)
				return hr_error_set(err, HR_ENOMEM, "%s: out of memory", bin->path);
			s->name = name;
			s->addr = sym.st_value;
			s->size = sym.st_size;
			s->type = (uint8_t)GELF_ST_TYPE(sym.st_info);
			if (!strcmp(name, "runtime.types")) {
				bin->has_runtime_types = true;
				bin->runtime_types = sym.st_value;
			}
		}
	}
	bin->has_symtab = true;
	binary_elf_sort_symbols(bin);
	if (sh.sh_type != SHT_NOBITS)
		drop_pages(bin, sh.sh_offset, sh.sh_size);
	return HR_OK;
}

static int check_header(struct hr_binary *bin, struct hr_error *err)
{
	GElf_Ehdr eh;

	if (elf_kind(bin->elf) != ELF_K_ELF)
		return hr_error_set(err, HR_EINPUT, "%s: not an ELF file", bin->path);
	if (!gelf_getehdr(bin->elf, &eh))
		return fail_elf(bin, err, "cannot read the ELF header");
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)
		return hr_error_set(err, HR_EINPUT, "%s: not an executable (ELF type %u)", bin->path,
				    (unsigned)eh.e_type);
	bin->big_endian = eh.e_ident[EI_DATA] == ELFDATA2MSB;
	bin->ptr_size = eh.e_ident[EI_CLASS] == ELFCLASS64 ? 8 : 4;
	bin->elf_entry = eh.e_entry;
	bin->pie = eh.e_type == ET_DYN;
	return HR_OK;
}

static const struct section *section_named(const struct hr_binary *bin, const char *name)
{
	for (size_t i = 0; i < bin->sections_n; i++)
		if (!strcmp(bin->sections[i].name, name))
			return &bin->sections[i];
	return NULL;
}

/*
 * Go 1.18 and later write their version into .go.buildinfo: the 14-byte magic
 * "\xff Go buildinf:", the pointer size, a flags byte (0x2: the strings follow inline),
 * padding to 32 bytes, then the version as a uvarint length and its bytes. Older
 * layouts (pointers to the strings) are not read: the version stays unknown, which
 * only turns off the version comparison with the dump.
 */
static void read_go_version(struct hr_binary *bin)
{
	static const char magic[] = "\xff Go buildinf:";
	const struct section *s = section_named(bin, ".go.buildinfo");
	Elf_Data *d = s && s->type != SHT_NOBITS ? elf_getdata(s->scn, NULL) : NULL;
	const uint8_t *p = d ? d->d_buf : NULL;
	size_t n = p ? d->d_size : 0;
	uint64_t len = 0;
	size_t i = 32;

	if (n < 34 || memcmp(p, magic, sizeof(magic) - 1) || !(p[15] & 0x2))
		return;
	for (unsigned shift = 0; i < n && shift < 64; shift += 7) {
		len |= (uint64_t)(p[i] & 0x7f) << shift;
		if (!(p[i++] & 0x80))
			break;
	}
	if (len == 0 || len >= sizeof(bin->go_version) || len > n - i)
		return;
	for (size_t k = 0; k < len; k++)
		if (p[i + k] < 0x20 || p[i + k] > 0x7e)
			return;
	memcpy(bin->go_version, p + i, len);
	bin->go_version[len] = 0;
}

/*
 * The Go linker writes the build ID (what `go tool buildid` prints) as an ELF note in
 * .note.go.buildid: name size, description size and type 4 (words in the file's byte
 * order), the name "Go\0\0", then the ID. Left empty if anything is off.
 */
static void read_build_id(struct hr_binary *bin)
{
	const struct section *s = section_named(bin, ".note.go.buildid");
	Elf_Data *d = s && s->type != SHT_NOBITS ? elf_getdata(s->scn, NULL) : NULL;
	const uint8_t *p = d ? d->d_buf : NULL;
	uint32_t w[3];

	if (!p || d->d_size < 16)
		return;
	for (int k = 0; k < 3; k++)
		w[k] = bin->big_endian ? (uint32_t)p[4 * k] << 24 | (uint32_t)p[4 * k + 1] << 16 |
					       (uint32_t)p[4 * k + 2] << 8 | p[4 * k + 3]
				       : (uint32_t)p[4 * k + 3] << 24 | (uint32_t)p[4 * k + 2] << 16 |
					       (uint32_t)p[4 * k + 1] << 8 | p[4 * k];
	if (w[0] != 4 || w[2] != 4 || memcmp(p + 12, "Go\0\0", 4) || w[1] == 0 ||
	    w[1] >= sizeof(bin->build_id) || w[1] > d->d_size - 16)
		return;
	for (uint32_t k = 0; k < w[1]; k++)
		if (p[16 + k] < 0x20 || p[16 + k] > 0x7e)
			return;
	memcpy(bin->build_id, p + 16, w[1]);
	bin->build_id[w[1]] = 0;
}

const char *hr_binary_build_id(const struct hr_binary *bin)
{
	return bin->build_id;
}

const char *hr_binary_go_version(const struct hr_binary *bin)
{
	return bin->go_version;
}

/* Every Go linker writes .gopclntab (even with -s -w); 1.18+ also .go.buildinfo. */
bool hr_binary_is_go(const struct hr_binary *bin)
{
	return bin->go_version[0] || section_named(bin, ".gopclntab");
}

bool hr_binary_section_range(const struct hr_binary *bin, const char *name, uint64_t *addr,
			     uint64_t *size)
{
	const struct section *s = section_named(bin, name);

	if (!s)
		return false;
	*addr = s->addr;
	*size = s->size;
	return true;
}

int binary_elf_open(struct hr_binary *bin, const char *path, struct hr_error *err)
{
	int rc;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return hr_error_set(err, HR_EIO, "%s: libelf is out of date", bin->path);
	/* a regular file only: libelf takes a directory for an empty file, a FIFO blocks */
	bin->fd = hr_open_regular(path, bin->path, "a Go binary", HR_EINPUT, err);
	if (bin->fd < 0)
		return err->code;
	bin->elf = elf_begin(bin->fd, ELF_C_READ_MMAP, NULL);
	if (!bin->elf)
		return fail_elf(bin, err, "cannot read as ELF");
	rc = check_header(bin, err);
	if (!rc)
		rc = read_sections(bin, err);
	if (!rc) {
		read_go_version(bin);
		read_build_id(bin);
	}
	return rc;
}

void binary_elf_close(struct hr_binary *bin)
{
	if (bin->elf)
		elf_end(bin->elf);
	if (bin->fd >= 0)
		close(bin->fd);
	free(bin->sections);
	free(bin->symbols);
}

/* ---- memory ------------------------------------------------------------------------------ */

/* The section containing ELF address addr, or NULL. */
static const struct section *section_for(const struct hr_binary *bin, uint64_t addr)
{
	size_t lo = hr_count_key_at_most(bin->sections, bin->sections_n, sizeof(*bin->sections),
					 offsetof(struct section, addr), addr);

	/* sections may overlap (.tbss); walk back over the ones starting at or before */
	for (size_t i = lo; i-- > 0;) {
		const struct section *s = &bin->sections[i];

		if (addr - s->addr < s->size)
			return s;
		if (i + 4 < lo)
			break;
	}
	return NULL;
}

const char *hr_binary_section_at(const struct hr_binary *bin, uint64_t addr)
{
	const struct section *s = section_for(bin, addr);

	return s ? s->name : NULL;
}

int hr_binary_read(const struct hr_binary *bin, uint64_t addr, void *buf, size_t len,
		   struct hr_error *err)
{
	const struct section *s = section_for(bin, addr);
	uint64_t off = s ? addr - s->addr : 0;

	if (!s)
		return hr_error_set(err, HR_EINPUT, "%s: address 0x%" PRIx64 " is in no section",
				    bin->path, addr);
	if (s->type == SHT_NOBITS)
		return hr_error_set(err, HR_EINPUT, "%s: address 0x%" PRIx64
				    " is in %s, which has no contents in the file", bin->path, addr,
				    s->name);
	if (len > s->size - off)
		return hr_error_set(err, HR_EINPUT, "%s: %zu bytes at 0x%" PRIx64
				    " run past the end of %s", bin->path, len, addr, s->name);
	if (!s->data)
		return hr_error_set(err, HR_EINPUT, "%s: cannot read section %s", bin->path,
				    s->name);
	memcpy(buf, s->data + off, len);
	return HR_OK;
}

/* ---- symbols ------------------------------------------------------------------------------ */

size_t hr_binary_symbol_count(const struct hr_binary *bin)
{
	return bin->symbols_n;
}

const struct hr_symbol *hr_binary_symbol(const struct hr_binary *bin, size_t index)
{
	return index < bin->symbols_n ? &bin->symbols[index] : NULL;
}

const struct hr_symbol *hr_binary_symbol_at(const struct hr_binary *bin, uint64_t addr)
{
	size_t lo = hr_count_key_at_most(bin->symbols, bin->symbols_n, sizeof(*bin->symbols),
					 offsetof(struct hr_symbol, addr), addr);

	const struct hr_symbol *marker = NULL;

	/*
	 * Look back a few symbols: zero-sized ones (runtime.bss, runtime.edata) sit at the
	 * start of or inside sized ones. A sized symbol holding addr wins over such a marker.
	 */
	for (size_t i = lo, steps = 0; i-- > 0 && steps < 8; steps++) {
		const struct hr_symbol *s = &bin->symbols[i];

		if (addr - s->addr < s->size)
			return s;
		if (s->size == 0 && s->addr == addr && !marker)
			marker = s;
	}
	return marker;
}

const struct hr_symbol *hr_binary_find_symbol(const struct hr_binary *bin, const char *name)
{
	for (size_t i = 0; i < bin->symbols_n; i++)
		if (!strcmp(bin->symbols[i].name, name))
			return &bin->symbols[i];
	return NULL;
}
