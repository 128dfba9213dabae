/* SPDX-License-Identifier: Apache-2.0 */
/*
 * core_file.c - the ELF core file: its PT_LOAD segments (the process's memory), the
 * registers of its threads (NT_PRSTATUS notes) and the program's entry point (AT_ENTRY
 * in the NT_AUXV note, which gives a PIE binary's load bias).
 *
 * Only 64-bit little-endian cores of amd64 and arm64 are read: the architectures heapref
 * supports. Every header, segment and note is checked against the file's size before it
 * is used; a core cut short fails naming the segment that needs the missing bytes.
 */
#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core_internal.h"

/* struct elf_prstatus (64-bit): pr_pid at 32, the general registers from 112. */
#define PRSTATUS_PID 32
#define PRSTATUS_REGS 112
/* Indexes in the register block: user_regs_struct (amd64), user_pt_regs (arm64). */
#define AMD64_RIP 16
#define AMD64_RSP 19
#define AMD64_NREGS 27
#define ARM64_LR 30
#define ARM64_SP 31
#define ARM64_PC 32
#define ARM64_NREGS 34
#define NOTE_ALIGN(n) (((n) + 3) & ~(uint64_t)3)

static uint64_t le64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8); /* cores read here are little-endian, as is every host we build on */
	return v;
}

static uint32_t le32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

HR_PRINTF(4, 5)
static int bad(const struct core_image *img, struct hr_error *err, uint64_t off,
	       const char *fmt, ...)
{
	char what[HR_ERROR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return hr_error_set(err, HR_EINPUT, "%s: byte %" PRIu64 ": %s", img->path, off, what);
}

static int map_core(struct core_image *img, const char *path, struct hr_error *err)
{
	struct stat st;
	int fd = hr_open_regular(path, img->path, "a core file", HR_EIO, err);
	void *map;

	if (fd < 0)
		return err->code;
	if (fstat(fd, &st) != 0 || st.st_size <= 0) {
		close(fd);
		return hr_error_set(err, HR_EIO, "%s: not a regular, non-empty file", img->path);
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return hr_error_set(err, HR_EIO, "%s: cannot map: %s", img->path, strerror(errno));
	img->map = map;
	img->len = (size_t)st.st_size;
	return HR_OK;
}

static int check_header(const struct core_image *img, const Elf64_Ehdr *eh, struct hr_error *err)
{
	if (img->len < SELFMAG || memcmp(eh->e_ident, ELFMAG, SELFMAG))
		return bad(img, err, 0, "not an ELF file");
	if (img->len < sizeof(*eh))
		return bad(img, err, img->len, "the ELF header is cut short: %zu of its %zu bytes "
			   "(truncated core?)", img->len, sizeof(*eh));
	if (eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != ELFDATA2LSB)
		return bad(img, err, EI_CLASS, "not a 64-bit little-endian ELF file");
	if (eh->e_type != ET_CORE)
		return bad(img, err, 16, "an ELF file of type %u, not a core file (type 4)",
			   eh->e_type);
	if (eh->e_machine != EM_X86_64 && eh->e_machine != EM_AARCH64)
		return bad(img, err, 18, "a core of machine %u: heapref reads amd64 and arm64 cores",
			   eh->e_machine);
	if (eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phoff > img->len ||
	    (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) > img->len - eh->e_phoff)
		return bad(img, err, 32, "program headers (%u at byte %" PRIu64 ") past the end of "
			   "the file (truncated core?)", eh->e_phnum, (uint64_t)eh->e_phoff);
	return HR_OK;
}

static int add_thread(struct core_image *img, const uint8_t *desc, uint64_t size, size_t *cap)
{
	struct core_thread *t;
	const uint8_t *regs = desc + PRSTATUS_REGS;
	bool arm = img->machine == EM_AARCH64;
	uint64_t nregs = arm ? ARM64_NREGS : AMD64_NREGS;

	if (size < PRSTATUS_REGS + nregs * 8)
		return HR_EINPUT;
	t = hr_array_push((void **)&img->threads, &img->nthreads, cap, sizeof(*t));
	if (!t)
		return HR_ENOMEM;
	t->tid = le32(desc + PRSTATUS_PID);
	t->pc = le64(regs + 8 * (arm ? ARM64_PC : AMD64_RIP));
	t->sp = le64(regs + 8 * (arm ? ARM64_SP : AMD64_RSP));
	t->lr = arm ? le64(regs + 8 * ARM64_LR) : 0;
	return HR_OK;
}

static void read_auxv(struct core_image *img, const uint8_t *desc, uint64_t size)
{
	for (uint64_t i = 0; i + 16 <= size; i += 16)
		if (le64(desc + i) == AT_ENTRY)
			img->entry = le64(desc + i + 8);
}

/* The notes of one PT_NOTE segment: threads and the auxiliary vector. */
static int read_notes(struct core_image *img, const Elf64_Phdr *ph, size_t *threads_cap,
		      struct hr_error *err)
{
	uint64_t pos = ph->p_offset, end;

	if (ph->p_offset > img->len || ph->p_filesz > img->len - ph->p_offset)
		return bad(img, err, ph->p_offset, "note segment of %" PRIu64 " bytes past the end "
			   "of the file (truncated core?)", (uint64_t)ph->p_filesz);
	end = ph->p_offset + ph->p_filesz;
	while (end - pos >= 12) {
		const uint8_t *n = img->map + pos;
		uint64_t namesz = le32(n), descsz = le32(n + 4), type = le32(n + 8);
		uint64_t desc = pos + 12 + NOTE_ALIGN(namesz);
		int rc = HR_OK;

		if (desc > end || descsz > end - desc)
			return bad(img, err, pos, "note of %" PRIu64 " bytes runs past its segment",
				   descsz);
		bool ours = namesz == sizeof(HR_CORE_NOTE_NAME) && descsz == 8 &&
			    !memcmp(n + 12, HR_CORE_NOTE_NAME, namesz);

		if (ours && type == HR_CORE_NOTE_CLOCK)
			img->now_ns = le64(img->map + desc);
		else if (ours && type == HR_CORE_NOTE_CPUS)
			img->ncpu = le64(img->map + desc);
		else if (type == NT_PRSTATUS)
			rc = add_thread(img, img->map + desc, descsz, threads_cap);
		else if (type == NT_AUXV)
			read_auxv(img, img->map + desc, descsz);
		if (rc == HR_ENOMEM)
			return hr_error_set(err, HR_ENOMEM, "%s: out of memory", img->path);
		if (rc)
			return bad(img, err, desc, "thread status note of %" PRIu64 " bytes is too short",
				   descsz);
		pos = desc + NOTE_ALIGN(descsz);
	}
	return HR_OK;
}

static int cmp_seg(const void *a, const void *b)
{
	const struct core_seg *x = a, *y = b;

	return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

static int add_segment(struct core_image *img, const Elf64_Phdr *ph, uint64_t ph_off,
		       size_t *cap, struct hr_error *err)
{
	struct core_seg *s;

	if (ph->p_filesz > ph->p_memsz || ph->p_vaddr + ph->p_memsz < ph->p_vaddr)
		return bad(img, err, ph_off, "segment at 0x%" PRIx64 " has %" PRIu64 " bytes in the "
			   "file but %" PRIu64 " in memory", (uint64_t)ph->p_vaddr,
			   (uint64_t)ph->p_filesz, (uint64_t)ph->p_memsz);
	if (ph->p_offset > img->len || ph->p_filesz > img->len - ph->p_offset)
		return bad(img, err, ph_off, "segment at 0x%" PRIx64 " needs the file's bytes up to "
			   "%" PRIu64 ", and it has %zu (truncated core?)", (uint64_t)ph->p_vaddr,
			   (uint64_t)(ph->p_offset + ph->p_filesz), img->len);
	if (!ph->p_memsz)
		return HR_OK;
	s = hr_array_push((void **)&img->segs, &img->nsegs, cap, sizeof(*s));
	if (!s)
		return hr_error_set(err, HR_ENOMEM, "%s: out of memory", img->path);
	*s = (struct core_seg){ ph->p_vaddr, ph->p_memsz, ph->p_filesz, ph->p_offset };
	return HR_OK;
}

/*
 * The bytes of memory the core holds: its segments' file parts, but no more than the
 * file, whose bytes a corrupt core could map at several addresses at once. What the
 * reader follows is bounded by this (core_bounds.c).
 */
static uint64_t held_bytes(const struct core_image *img)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < img->nsegs && sum < img->len; i++)
		sum += img->segs[i].filesz; /* each at most img->len: no overflow */
	return sum < img->len ? sum : img->len;
}

static int read_program_headers(struct core_image *img, const Elf64_Ehdr *eh, struct hr_error *err)
{
	size_t segs_cap = 0, threads_cap = 0;
	int rc = HR_OK;

	for (unsigned i = 0; i < eh->e_phnum && !rc; i++) {
		uint64_t off = eh->e_phoff + (uint64_t)i * sizeof(Elf64_Phdr);
		Elf64_Phdr ph;

		memcpy(&ph, img->map + off, sizeof(ph));
		if (ph.p_type == PT_LOAD)
			rc = add_segment(img, &ph, off, &segs_cap, err);
		else if (ph.p_type == PT_NOTE)
			rc = read_notes(img, &ph, &threads_cap, err);
	}
	if (rc)
		return rc;
	if (!img->nsegs)
		return bad(img, err, eh->e_phoff, "a core file with no memory segments");
	qsort(img->segs, img->nsegs, sizeof(*img->segs), cmp_seg);
	for (size_t i = 1; i < img->nsegs; i++)
		if (img->segs[i].vaddr < img->segs[i - 1].vaddr + img->segs[i - 1].memsz)
			return bad(img, err, eh->e_phoff, "memory segments at 0x%" PRIx64 " and 0x%"
				   PRIx64 " overlap", img->segs[i - 1].vaddr, img->segs[i].vaddr);
	img->held = held_bytes(img);
	return HR_OK;
}

static int parse_image(struct core_image *img, struct hr_error *err)
{
	Elf64_Ehdr eh;
	int rc;

	memcpy(&eh, img->map, img->len < sizeof(eh) ? img->len : sizeof(eh));
	if ((rc = check_header(img, &eh, err)))
		return rc;
	img->machine = eh.e_machine;
	return read_program_headers(img, &eh, err);
}

int core_image_open(struct core_image *img, const char *path, const char *name,
		    struct hr_error *err)
{
	int rc;

	memset(img, 0, sizeof(*img));
	img->path = name;
	img->owns_map = true;
	if ((rc = map_core(img, path, err)))
		return rc;
	return parse_image(img, err);
}

int core_image_open_bytes(struct core_image *img, const uint8_t *bytes, size_t len,
			  const char *name, struct hr_error *err)
{
	memset(img, 0, sizeof(*img));
	img->path = name;
	img->map = bytes;
	img->len = len;
	if (!len)
		return bad(img, err, 0, "an empty file");
	return parse_image(img, err);
}

void core_image_release(struct core_image *img, bool keep_map)
{
	if (img->map && img->owns_map && !keep_map)
		munmap((void *)img->map, img->len);
	free(img->segs);
	free(img->threads);
	memset(img, 0, sizeof(*img));
}

/* How many segments start at or below addr (they are sorted by vaddr). */
static size_t segs_upto(const struct core_image *img, uint64_t addr)
{
	size_t lo = 0, hi = img->nsegs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (img->segs[mid].vaddr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The segment containing addr, or NULL. */
static const struct core_seg *seg_at(const struct core_image *img, uint64_t addr)
{
	size_t lo = segs_upto(img, addr);

	if (!lo || addr - img->segs[lo - 1].vaddr >= img->segs[lo - 1].memsz)
		return NULL;
	return &img->segs[lo - 1];
}

const uint8_t *core_ptr(const struct core_image *img, uint64_t addr, uint64_t len)
{
	const struct core_seg *s = seg_at(img, addr);

	if (!s || addr - s->vaddr > s->filesz || len > s->filesz - (addr - s->vaddr))
		return NULL;
	return img->map + s->offset + (addr - s->vaddr);
}

/* The start of the first segment past addr, or UINT64_MAX. */
static uint64_t next_seg_start(const struct core_image *img, uint64_t addr)
{
	size_t lo = segs_upto(img, addr);

	return lo < img->nsegs ? img->segs[lo].vaddr : UINT64_MAX;
}

/*
 * Calls fn for each piece of [addr, addr + len): the ones the file holds (at p) and the
 * ones it does not (p NULL: past a segment's file part, or in no segment).
 */
static void for_each_piece(const struct core_image *img, uint64_t addr, uint64_t len,
			   void (*fn)(void *ctx, const uint8_t *p, uint64_t n), void *ctx)
{
	while (len) {
		const struct core_seg *s = seg_at(img, addr);
		uint64_t in = s ? addr - s->vaddr : 0, n;

		if (!s) {
			uint64_t next = next_seg_start(img, addr);

			n = next - addr < len ? next - addr : len;
			fn(ctx, NULL, n);
		} else if (in < s->filesz) {
			n = s->filesz - in < len ? s->filesz - in : len;
			fn(ctx, img->map + s->offset + in, n);
		} else {
			n = s->memsz - in < len ? s->memsz - in : len;
			fn(ctx, NULL, n);
		}
		addr += n;
		len -= n;
	}
}

static void count_held(void *ctx, const uint8_t *p, uint64_t n)
{
	if (p)
		*(uint64_t *)ctx += n;
}

uint64_t core_held(const struct core_image *img, uint64_t addr, uint64_t len)
{
	uint64_t held = 0;

	for_each_piece(img, addr, len, count_held, &held);
	return held;
}

static void copy_piece(void *ctx, const uint8_t *p, uint64_t n)
{
	uint8_t **out = ctx;

	if (p)
		memcpy(*out, p, n);
	else
		memset(*out, 0, n);
	*out += n;
}

void core_read_or_zeros(const struct core_image *img, uint64_t addr, uint8_t *buf, size_t len)
{
	for_each_piece(img, addr, len, copy_piece, &buf);
}

/* Reads what the core does not hold from the binary's sections; zeros past a segment's
 * file part the binary does not have either (memory never written). */
static int read_missing(const struct core_image *img, const struct core_seg *s, uint64_t addr,
			uint8_t *out, uint64_t n)
{
	if (img->exe && !hr_image_read(img->exe, addr, out, (size_t)n, NULL))
		return 0;
	if (!s)
		return -1;
	memset(out, 0, n);
	return 0;
}

int core_read(const struct core_image *img, uint64_t addr, void *buf, size_t len)
{
	uint8_t *out = buf;

	while (len) {
		const struct core_seg *s = seg_at(img, addr);
		uint64_t in, n;

		if (!s) /* text and read-only data a core can leave out: the binary has them */
			return read_missing(img, NULL, addr, out, len);
		in = addr - s->vaddr;
		n = s->memsz - in < len ? s->memsz - in : len;
		if (in < s->filesz) {
			n = s->filesz - in < n ? s->filesz - in : n;
			memcpy(out, img->map + s->offset + in, n);
		} else if (read_missing(img, s, addr, out, n)) {
			return -1;
		}
		out += n;
		addr += n;
		len -= n;
	}
	return 0;
}
