/*
 * test_core_file.c - the ELF core layer of the core reader (src/core/core_file.c) on
 * hand-made cores: segments and notes read, memory read across segments (zeros past a
 * segment's file part, -1 outside every segment), and every malformed header, segment
 * or note refused with HR_EINPUT and a message naming the byte.
 */
#include <elf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core_internal.h"

#define MAX_CORE 8192

/* A core being built: header, program headers, then data. */
struct core_buf {
	uint8_t b[MAX_CORE];
	size_t len;
	unsigned nph;
};

static void start(struct core_buf *c, unsigned nph, uint16_t machine)
{
	Elf64_Ehdr eh = { 0 };

	memset(c, 0, sizeof(*c));
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_type = ET_CORE;
	eh.e_machine = machine;
	eh.e_phoff = sizeof(eh);
	eh.e_phentsize = sizeof(Elf64_Phdr);
	eh.e_phnum = (Elf64_Half)nph;
	memcpy(c->b, &eh, sizeof(eh));
	c->len = sizeof(eh) + nph * sizeof(Elf64_Phdr);
	c->nph = 0;
}

/* Appends data and a program header for it; returns the data's offset. */
static uint64_t add(struct core_buf *c, uint32_t type, uint64_t vaddr, const void *data,
		    uint64_t filesz, uint64_t memsz)
{
	Elf64_Phdr ph = { .p_type = type, .p_offset = c->len, .p_vaddr = vaddr,
			  .p_filesz = filesz, .p_memsz = memsz };
	uint64_t off = c->len;

	memcpy(c->b + sizeof(Elf64_Ehdr) + c->nph++ * sizeof(ph), &ph, sizeof(ph));
	memcpy(c->b + c->len, data, filesz);
	c->len += filesz;
	return off;
}

static size_t prstatus_note(uint8_t *out, uint32_t tid, uint64_t pc, uint64_t sp)
{
	uint8_t desc[112 + 27 * 8 + 8] = { 0 };
	uint32_t head[3] = { 5, sizeof(desc), NT_PRSTATUS };

	memcpy(desc + 32, &tid, 4);
	memcpy(desc + 112 + 16 * 8, &pc, 8);
	memcpy(desc + 112 + 19 * 8, &sp, 8);
	memcpy(out, head, 12);
	memcpy(out + 12, "CORE\0\0\0", 8);
	memcpy(out + 20, desc, sizeof(desc));
	return 20 + sizeof(desc);
}

static int open_buf(const struct core_buf *c, struct core_image *img, struct hr_error *err)
{
	memset(err, 0, sizeof(*err));
	return core_image_open_bytes(img, c->b, c->len, "t.core", err);
}

static void reads_segments_notes_and_memory(void **state)
{
	struct core_buf c;
	struct core_image img;
	struct hr_error err;
	uint8_t notes[512], a[16], b[32], got[48];
	size_t nlen = prstatus_note(notes, 77, 0x401000, 0xc000100000);

	(void)state;
	memset(a, 0xaa, sizeof(a));
	memset(b, 0xbb, sizeof(b));
	start(&c, 3, EM_X86_64);
	add(&c, PT_NOTE, 0, notes, nlen, 0);
	add(&c, PT_LOAD, 0x2000, b, sizeof(b), sizeof(b));
	add(&c, PT_LOAD, 0x1000, a, sizeof(a), 0x1000); /* the rest of the page reads as 0 */
	assert_int_equal(open_buf(&c, &img, &err), HR_OK);
	assert_int_equal(img.nsegs, 2);
	assert_true(img.segs[0].vaddr == 0x1000 && img.segs[1].vaddr == 0x2000); /* sorted */
	assert_int_equal(img.nthreads, 1);
	assert_int_equal(img.threads[0].tid, 77);
	assert_true(img.threads[0].pc == 0x401000 && img.threads[0].sp == 0xc000100000);
	/* across the end of the first segment's file part, its zeros, into the second */
	assert_int_equal(core_read(&img, 0x1ff8, got, 16), 0);
	assert_memory_equal(got, "\0\0\0\0\0\0\0\0\xbb\xbb\xbb\xbb\xbb\xbb\xbb\xbb", 16);
	assert_int_equal(core_read(&img, 0x1008, got, 16), 0);
	assert_memory_equal(got, a, 8);
	assert_non_null(core_ptr(&img, 0x1000, 16));
	assert_null(core_ptr(&img, 0x1000, 17));  /* past the file part: no pointer */
	assert_int_equal(core_read(&img, 0x3000, got, 1), -1); /* in no segment, no binary */
	assert_int_equal(core_read(&img, 0x2018, got, 16), -1); /* runs past the last one */
	core_image_release(&img, false);
}

static void refused(const struct core_buf *c, const char *words)
{
	struct core_image img;
	struct hr_error err;

	assert_int_equal(open_buf(c, &img, &err), HR_EINPUT);
	assert_non_null(strstr(err.msg, "t.core: byte "));
	assert_non_null(strstr(err.msg, words));
	core_image_release(&img, false);
}

static void refuses_malformed_cores(void **state)
{
	struct core_buf c;
	uint8_t data[64] = { 0 }, notes[512];
	size_t nlen = prstatus_note(notes, 1, 0, 0);

	(void)state;
	start(&c, 1, EM_X86_64);
	add(&c, PT_LOAD, 0x1000, data, sizeof(data), sizeof(data));
	c.len = 40;
	refused(&c, "cut short");
	start(&c, 1, EM_X86_64);
	c.b[16] = ET_EXEC;
	refused(&c, "not a core file");
	start(&c, 1, 3 /* EM_386 */);
	refused(&c, "amd64 and arm64");
	start(&c, 200, EM_X86_64); /* 200 program headers in a file of 64 bytes */
	c.len = sizeof(Elf64_Ehdr);
	refused(&c, "program headers");
	start(&c, 1, EM_X86_64);
	add(&c, PT_LOAD, 0x1000, data, sizeof(data), sizeof(data));
	c.len -= 1; /* the segment's last byte is missing */
	refused(&c, "truncated core");
	start(&c, 1, EM_X86_64);
	add(&c, PT_LOAD, 0x1000, data, sizeof(data), 8); /* more in the file than in memory */
	refused(&c, "in the file but");
	start(&c, 2, EM_X86_64);
	add(&c, PT_LOAD, 0x1000, data, sizeof(data), 0x100);
	add(&c, PT_LOAD, 0x1080, data, sizeof(data), sizeof(data));
	refused(&c, "overlap");
	start(&c, 1, EM_X86_64);
	memcpy(notes + 4, "\xff\xff\x00\x00", 4); /* a note claiming 64 KiB of description */
	add(&c, PT_NOTE, 0, notes, nlen, 0);
	refused(&c, "runs past its segment");
	start(&c, 1, EM_X86_64);
	nlen = prstatus_note(notes, 1, 0, 0);
	memcpy(notes + 4, "\x40\x00\x00\x00", 4); /* a thread status of 64 bytes: too short */
	add(&c, PT_NOTE, 0, notes, 20 + 64, 0);
	refused(&c, "too short");
	start(&c, 0, EM_X86_64);
	refused(&c, "no memory segments");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reads_segments_notes_and_memory),
		cmocka_unit_test(refuses_malformed_cores),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
