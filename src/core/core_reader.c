/* SPDX-License-Identifier: Apache-2.0 */
/*
 * core_reader.c - hr_core_open(): a core file and its binary in, the model out (see
 * core.h). The order: the core's segments and threads; the binary's load bias and a
 * check that the core is of this binary; the runtime's layout from DWARF; the heap;
 * then the roots, as runtime.WriteHeapDump writes them.
 */
#include <elf.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core_internal.h"
#include "heapref/binary.h"

#define ARENA_ALIGN (UINT64_C(64) << 20)

/* --- soft-failing reads ------------------------------------------------------------------ */

uint64_t cr_uint(struct core_reader *r, uint64_t addr, uint32_t size, const char *what)
{
	uint8_t buf[8];

	if (r->failed || size == 0 || size > 8)
		return 0;
	if (core_read(&r->img, addr, buf, size)) {
		r->failed = true;
		r->bad_addr = addr;
		r->bad_what = what;
		return 0;
	}
	return le_uint(buf, size);
}

uint64_t cr_word(struct core_reader *r, uint64_t addr, const char *what)
{
	return cr_uint(r, addr, r->ps, what);
}

uint64_t cr_field(struct core_reader *r, uint64_t base, const struct rt_field *f, const char *what)
{
	return f->present ? cr_uint(r, base + f->off, f->size, what) : 0;
}

struct hr_bytes cr_bytes(struct core_reader *r, uint64_t addr, uint64_t len, const char *what)
{
	const uint8_t *p = core_ptr(&r->img, addr, len);
	uint8_t *copy;

	if (r->failed)
		return (struct hr_bytes){ NULL, 0 };
	if (p || !len)
		return (struct hr_bytes){ p ? p : r->img.map, len };
	/* not in one piece of the core: copied into the model (a stack is at most 1 GiB) */
	copy = len <= (UINT64_C(1) << 30) ? hr_dump_build_memory(r->model, len, r->err) : NULL;
	if (!copy || core_read(&r->img, addr, copy, (size_t)len)) {
		r->failed = true, r->bad_addr = addr, r->bad_what = what;
		return (struct hr_bytes){ NULL, 0 };
	}
	return (struct hr_bytes){ copy, len };
}

int cr_fail_report(struct core_reader *r)
{
	return hr_error_set(r->err, HR_EINPUT, "%s: cannot read %s at 0x%" PRIx64 ": not in the core "
			    "nor in the binary (is the core of this binary, and whole?)", r->img.path,
			    r->bad_what ? r->bad_what : "memory", r->bad_addr);
}

uint64_t *cr_scratch_bits(struct core_reader *r, uint64_t nwords)
{
	size_t need = (size_t)hr_bit_words(nwords) + 1;

	if (need > r->bits_cap) {
		uint64_t *b = realloc(r->bits, need * sizeof(*b));

		if (!b)
			return NULL;
		r->bits = b;
		r->bits_cap = need;
	}
	memset(r->bits, 0, need * sizeof(*r->bits));
	return r->bits;
}

/* --- input detection ------------------------------------------------------------------- */

enum hr_input_kind hr_input_kind_of(const char *path)
{
	uint8_t head[18] = { 0 };
	int fd = hr_open_regular(path, NULL, "a heap input", HR_EIO, NULL);
	ssize_t n;

	if (fd < 0) /* the reader opening it says why */
		return HR_INPUT_UNKNOWN;
	n = read(fd, head, sizeof(head));
	close(fd);
	if (n >= 4 && !memcmp(head, "\177ELF", 4))
		return n >= 18 && head[16] == 4 && head[17] == 0 ? HR_INPUT_CORE : HR_INPUT_ELF;
	if (n >= 4 && !memcmp(head, "go1.", 4))
		return HR_INPUT_DUMP;
	return HR_INPUT_UNKNOWN;
}

/* --- the pieces in order ----------------------------------------------------------------- */

static unsigned go_minor_of(const char *version)
{
	unsigned minor = 0;

	if (strncmp(version, "go1.", 4))
		return 0;
	for (const char *p = version + 4; *p >= '0' && *p <= '9'; p++)
		minor = minor * 10 + (unsigned)(*p - '0');
	return minor;
}

/*
 * A core of another program would be read as garbage: the Go build ID note, which the
 * kernel and gcore both write with the ELF headers' page, must be the binary's.
 */
static int check_same_binary(struct core_reader *r)
{
	uint64_t addr, size;
	uint8_t buf[256];
	const uint8_t *in_core;
	uint64_t i;

	if (!hr_binary_section_range(r->bin, ".note.go.buildid", &addr, &size) || size > sizeof(buf))
		return HR_OK;
	in_core = core_ptr(&r->img, hr_image_runtime(&r->exe, addr), size);
	if (!in_core || hr_binary_read(r->bin, addr, buf, (size_t)size, NULL))
		return HR_OK; /* the core left the page out: nothing to compare */
	for (i = 0; i < size && !in_core[i]; i++)
		;
	if (i == size)
		return HR_OK; /* a hole: the page was not written */
	if (memcmp(in_core, buf, (size_t)size) && !r->force)
		return hr_error_set(r->err, HR_EMISMATCH, "%s: byte %" PRIu64 ": not a core of %s: the "
				    "Go build ID in the core differs from the binary's", r->img.path,
				    (uint64_t)(in_core - r->img.map), hr_binary_path(r->bin));
	return HR_OK;
}

static int check_go_process(struct core_reader *r)
{
	uint64_t allgs = cr_word(r, r->L.allgs, "runtime.allgs");
	uint64_t spans = cr_word(r, r->L.mheap + r->L.h_allspans.off, "mheap_.allspans");

	if (r->failed || !allgs || !spans)
		return hr_error_set(r->err, HR_EINPUT, "%s: no Go heap in this core: runtime.allgs "
				    "and mheap_.allspans of %s are %s (a core of another program, or "
				    "of a process that had not started its runtime?)", r->img.path,
				    hr_binary_path(r->bin), r->failed ? "not in it" : "empty");
	return HR_OK;
}

/* The runtime's parameters: runtime.ncpu where the binary kept it, else heapref's note. */
static struct hr_dump_params params_of(struct core_reader *r)
{
	static const char amd64[] = "amd64", arm64[] = "arm64";
	bool arm = r->img.machine == EM_AARCH64;
	struct hr_dump_params p = {
		.ptr_size = r->ps,
		.goarch = { (const uint8_t *)(arm ? arm64 : amd64), 5 },
		.ncpu = r->L.ncpu ? (uint64_t)(int32_t)cr_uint(r, r->L.ncpu, 4, "runtime.ncpu") : 0,
		.now_ns = r->img.now_ns,
		.load_bias_known = true,
		.load_bias = r->exe.bias,
	};

	r->failed = false; /* ncpu is for show */
	if (!p.ncpu)
		p.ncpu = r->img.ncpu;
	return p;
}

static int read_all(struct core_reader *r)
{
	int rc;

	if ((rc = core_read_heap(r)) || (rc = core_read_itabs(r)) ||
	    (rc = core_read_goroutines(r)) || (rc = core_read_segments(r)) ||
	    (rc = core_read_finalizers(r)) || (rc = core_read_memprof(r)))
		return rc;
	return HR_OK;
}

/*
 * A PIE binary runs at a bias: the entry point the kernel gave the process (AT_ENTRY)
 * less the binary's own. Any other binary runs where it says, so a different entry
 * point means the core is of another program.
 */
static int set_bias(struct core_reader *r)
{
	uint64_t entry = hr_binary_elf_entry(r->bin);

	if (!r->img.entry || !entry || r->img.entry == entry)
		return HR_OK;
	if (hr_binary_is_pie(r->bin))
		return hr_image_at(r->bin, r->img.entry - entry, &r->exe, r->err);
	if (r->force)
		return HR_OK;
	return hr_error_set(r->err, HR_EMISMATCH, "%s: not a core of %s: its entry point is 0x%" PRIx64
			    " and the binary's 0x%" PRIx64, r->img.path, hr_binary_path(r->bin),
			    r->img.entry, entry);
}

/* Opens the pieces hr_core_open() reads with, up to the model's start. */
static int begin(struct core_reader *r, const char *path)
{
	struct hr_dump_params params;
	const char *version = hr_binary_go_version(r->bin);
	int rc;

	r->exe = (struct hr_image){ r->bin, 0 }; /* set_bias() moves it */
	r->img.exe = &r->exe;
	r->go_minor = go_minor_of(version);
	if (hr_binary_ptr_size(r->bin) != 8)
		return hr_error_set(r->err, HR_EINPUT, "%s: %s is not a 64-bit binary", path,
				    hr_binary_path(r->bin));
	if ((rc = set_bias(r)) || (rc = check_same_binary(r)) ||
	    (rc = rt_layout_load(&r->L, &r->exe, path, r->err)) || (rc = check_go_process(r)) ||
	    !(r->pcln = hr_pclntab_open(&r->exe, r->err)))
		return rc ? rc : r->err->code;
	params = params_of(r);
	r->map_given = true; /* hr_dump_build_begin() owns the mapping from now on, even failing */
	r->model = hr_dump_build_begin(path, r->img.map, r->img.len, r->img.owns_map, &params,
					r->err);
	if (!r->model)
		return r->err->code;
	return hr_dump_build_provenance(r->model, r->live ? HR_SOURCE_PROCESS : HR_SOURCE_CORE,
					version, r->err);
}

struct hr_dump *hr_core_open(const char *path, const struct hr_binary *bin, struct hr_error *err)
{
	return hr_core_open_as(path, bin, &(struct hr_core_options){ .name = path }, err);
}

/* Allocated objects read as never written: a few are being allocated at any moment. */
#define UNWRITTEN_QUIET 64

/* Appends one sentence of the caveat. */
static void caveat_add(char *text, size_t cap, const char *fmt, ...) HR_PRINTF(3, 4);
static void caveat_add(char *text, size_t cap, const char *fmt, ...)
{
	size_t n = strlen(text);
	va_list ap;

	if (n && n + 2 < cap)
		strcpy(text + n, "; "), n += 2;
	va_start(ap, fmt);
	vsnprintf(text + n, cap - n, fmt, ap);
	va_end(ap);
}

/* What could not be read exactly, said once by the commands. */
static void set_caveat(struct core_reader *r)
{
	char text[768] = "";

	if (r->missing_objects)
		caveat_add(text, sizeof(text), "%" PRIu64 " allocated object%s (%.1f MB) in memory "
			   "the core does not hold (a dumper that cut its mappings short?): what only "
			   "they lead to is counted unreachable", r->missing_objects,
			   r->missing_objects == 1 ? "" : "s", (double)r->missing_bytes / 1e6);
	if (r->unwritten_objects > UNWRITTEN_QUIET)
		caveat_add(text, sizeof(text), "%" PRIu64 " allocated objects (%.1f MB) read as "
			   "never written (no type in their header, no pointer bits): pages the core "
			   "missed (a dumper that copied while the process ran?), their pointers lost",
			   r->unwritten_objects, (double)r->unwritten_bytes / 1e6);
	if (r->unwind_stops)
		caveat_add(text, sizeof(text), "%" PRIu64 " goroutine%s running when the core was "
			   "taken could be unwound only in part: what their lower frames keep is not "
			   "charged to them", r->unwind_stops, r->unwind_stops == 1 ? "" : "s");
	else if (r->unbuilt_masks)
		caveat_add(text, sizeof(text), "%" PRIu64 " object%s whose type's pointer mask the "
			   "runtime had not built yet: their words are followed by type only",
			   r->unbuilt_masks, r->unbuilt_masks == 1 ? "" : "s");
	if (text[0])
		hr_dump_build_caveat(r->model, text);
}

/* The reading, once the image is open (or failed to: rc). */
static struct hr_dump *read_core(struct core_reader *r, int rc, const char *name)
{
	if (!rc)
		rc = begin(r, name);
	if (!rc)
		rc = read_all(r);
	if (!rc) {
		struct hr_dump_params params = *hr_dump_params(r->model);

		params.heap_start = r->heap_lo / ARENA_ALIGN * ARENA_ALIGN;
		params.heap_end = (r->heap_hi + ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN;
		hr_dump_build_params(r->model, &params);
		set_caveat(r);
		rc = hr_dump_build_finish(r->model, r->err);
	}
	if (rc) {
		hr_dump_free(r->model); /* unmaps the core if it got that far */
		r->model = NULL;
	}
	core_image_release(&r->img, r->map_given);
	hr_pclntab_free(r->pcln);
	free(r->bits);
	return r->model;
}

struct hr_dump *hr_core_open_as(const char *path, const struct hr_binary *bin,
				const struct hr_core_options *o, struct hr_error *err)
{
	const char *name = o->name ? o->name : path;
	struct core_reader r = { .bin = bin, .err = err, .ps = 8, .force = o->force,
				 .live = o->live };

	return read_core(&r, core_image_open(&r.img, path, name, err), name);
}

struct hr_dump *hr_core_open_bytes(const void *bytes, size_t len, const char *name,
				   const struct hr_binary *bin, struct hr_error *err)
{
	struct core_reader r = { .bin = bin, .err = err, .ps = 8 };

	return read_core(&r, core_image_open_bytes(&r.img, bytes, len, name, err), name);
}
