/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_core_file.c - the ELF core layer of the core reader (src/core/core_file.c) on
 * hand-made cores: segments and notes read, memory read across segments (zeros past a
 * segment's file part, -1 outside every segment), and every malformed header, segment
 * or note refused with HR_EINPUT and a message naming the byte; and the bounds of
 * src/core/core_bounds.c on lists and arrays of such cores: lists walked to their end,
 * loops found on their second lap, lists and arrays held to the memory the core holds.
 */
#include <elf.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
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
	assert_int_equal(img.held, sizeof(a) + sizeof(b)); /* the file parts */
	core_image_release(&img, false);
}

static void held_is_at_most_the_file(void **state)
{
	struct core_buf c;
	struct core_image img;
	struct hr_error err;
	uint8_t data[1024] = { 0 };
	Elf64_Phdr ph;

	(void)state;
	start(&c, 2, EM_X86_64);
	add(&c, PT_LOAD, 0x1000, data, sizeof(data), sizeof(data));
	add(&c, PT_LOAD, 0x2000, data, sizeof(data), sizeof(data));
	/* the second segment maps the first one's bytes again */
	memcpy(&ph, c.b + sizeof(Elf64_Ehdr) + sizeof(ph), sizeof(ph));
	ph.p_offset -= sizeof(data);
	memcpy(c.b + sizeof(Elf64_Ehdr) + sizeof(ph), &ph, sizeof(ph));
	c.len -= sizeof(data);
	assert_int_equal(open_buf(&c, &img, &err), HR_OK);
	assert_int_equal(img.held, c.len);
	core_image_release(&img, false);
}

/* --- lists and arrays (core_bounds.c) ------------------------------------------------- */

#define NODES 0x1000  /* where list_core() puts its nodes, 16 bytes each: next, index */
#define MAX_NODES 64
#define LIST_SEGMENT 4096 /* the segment holding them: the core holds 4 KiB */

/* A core whose one segment holds n nodes, node i linked to node i + 1, and the last one
 * to node loop_to (n: to none). */
static void list_core(struct core_buf *c, unsigned n, unsigned loop_to)
{
	uint64_t nodes[LIST_SEGMENT / 8] = { 0 };

	for (unsigned i = 0; i < n; i++) {
		nodes[2 * i] = i + 1 < n ? NODES + 16 * (i + 1) : loop_to < n ? NODES + 16 * loop_to : 0;
		nodes[2 * i + 1] = i;
	}
	start(c, 1, EM_X86_64);
	add(c, PT_LOAD, NODES, nodes, LIST_SEGMENT, LIST_SEGMENT);
}

/* Where node i's link is in the file. */
static uint8_t *link_of(struct core_buf *c, unsigned i)
{
	return c->b + c->len - LIST_SEGMENT + 16 * i;
}

struct walked {
	uint64_t nodes[4 * MAX_NODES];
	unsigned n;
};

static int note_node(struct core_reader *r, struct list_walk *w, uint64_t node, void *ctx)
{
	struct walked *got = ctx;

	(void)r;
	(void)w;
	if (got->n < 4 * MAX_NODES)
		got->nodes[got->n++] = node;
	return HR_OK;
}

static void open_reader(const struct core_buf *c, struct core_reader *r, struct hr_error *err)
{
	memset(r, 0, sizeof(*r));
	r->err = err;
	r->ps = 8;
	assert_int_equal(open_buf(c, &r->img, err), HR_OK);
}

static const struct rt_field next_field = { 0, 8, true };

/* Walks the list of c from its first node, nodes of node_size bytes. */
static int walk_list(const struct core_buf *c, uint64_t node_size, struct walked *got,
		     struct hr_error *err)
{
	struct core_reader r;
	struct list_walk w;
	int rc;

	open_reader(c, &r, err);
	memset(got, 0, sizeof(*got));
	list_walk_begin(&w, "test.list", "node", node_size);
	rc = core_walk_list(&r, &w, NODES, &next_field, "node.next", note_node, got);
	core_image_release(&r.img, false);
	return rc;
}

static void walks_lists_to_their_end(void **state)
{
	struct core_buf c;
	struct walked got;
	struct hr_error err;

	(void)state;
	list_core(&c, 8, 8);
	assert_int_equal(walk_list(&c, 16, &got, &err), HR_OK);
	assert_int_equal(got.n, 8);
	for (unsigned i = 0; i < 8; i++)
		assert_true(got.nodes[i] == NODES + 16 * i);
}

static void finds_loops_on_their_second_lap(void **state)
{
	struct core_buf c;
	struct walked got;
	struct hr_error err;
	char want[128];

	(void)state;
	list_core(&c, 1, 0); /* a node pointing to itself */
	assert_int_equal(walk_list(&c, 16, &got, &err), HR_EINPUT);
	assert_string_equal(err.msg, "t.core: test.list loops back to node 0x1000 after 1 entry "
			    "(a corrupt core?)");
	assert_int_equal(got.n, 1);
	list_core(&c, 2, 0); /* two nodes pointing to each other */
	assert_int_equal(walk_list(&c, 16, &got, &err), HR_EINPUT);
	assert_string_equal(err.msg, "t.core: test.list loops back to node 0x1000 after 2 entries "
			    "(a corrupt core?)");
	for (unsigned n = 1; n <= MAX_NODES; n += 7) /* loops of every length from anywhere */
		for (unsigned to = 0; to < n; to += 3) {
			uint64_t named;
			unsigned after;

			list_core(&c, n, to);
			assert_int_equal(walk_list(&c, 16, &got, &err), HR_EINPUT);
			assert_int_equal(sscanf(err.msg, "t.core: test.list loops back to node 0x%" SCNx64
						" after %u entr", &named, &after), 2);
			assert_int_equal(after, got.n);
			assert_true(got.n >= n && got.n <= 2 * n + (n - to)); /* 2 laps at most */
			assert_true(named >= NODES + 16 * to && named < NODES + 16 * n); /* on it */
			snprintf(want, sizeof(want), "0x%" PRIx64, named);
			assert_non_null(strstr(err.msg, want));
		}
}

static void bounds_lists_by_the_core(void **state)
{
	struct core_buf c;
	struct walked got;
	struct hr_error err;
	struct core_reader r;
	struct list_walk w;

	(void)state;
	list_core(&c, 8, 8); /* in 4 KiB: 4 nodes of 1 KiB at most */
	assert_int_equal(walk_list(&c, 1024, &got, &err), HR_EINPUT);
	assert_string_equal(err.msg, "t.core: test.list has more entries than the 4096 bytes of "
			    "memory in the core can hold (5 so far; a corrupt core?)");
	assert_int_equal(got.n, 4);
	/* lists walked under one bound share it: 16 nodes of 256 bytes */
	open_reader(&c, &r, &err);
	list_walk_begin(&w, "test.lists", "node", 256);
	for (unsigned i = 0; i < 3; i++) {
		list_walk_restart(&w, "test list %u", i);
		if (core_walk_list(&r, &w, NODES, &next_field, "node.next", note_node, &got))
			break;
	}
	assert_string_equal(err.msg, "t.core: test.lists has more entries than the 4096 bytes of "
			    "memory in the core can hold (17 so far; a corrupt core?)");
	assert_int_equal(w.nodes, 17);
	core_image_release(&r.img, false);
	/* a link that cannot be read */
	list_core(&c, 3, 3);
	memcpy(link_of(&c, 2), "\x00\x00\x01\x00\x00\x00\x00\x00", 8); /* to 0x10000 */
	assert_int_equal(walk_list(&c, 16, &got, &err), HR_EINPUT);
	assert_non_null(strstr(err.msg, "cannot read node.next at 0x10000"));
}

static void bounds_arrays_by_the_core(void **state)
{
	struct core_buf c;
	struct core_reader r;
	struct hr_error err;

	(void)state;
	list_core(&c, 8, 8);
	open_reader(&c, &r, &err);
	assert_int_equal(core_check_count(&r, "test.array", 512, 8), HR_OK);
	assert_int_equal(core_check_count(&r, "test.array", 0, 0), HR_OK);
	assert_int_equal(core_check_count(&r, "test.array", 513, 8), HR_EINPUT);
	assert_string_equal(err.msg, "t.core: test.array claims 513 entries of 8 bytes, more than "
			    "the 4096 bytes of memory in the core can hold (a corrupt core?)");
	memset(&err, 0, sizeof(err));
	assert_int_equal(core_check_count(&r, "test.array", UINT64_MAX / 8, 16), HR_EINPUT);
	core_image_release(&r.img, false);
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
		cmocka_unit_test(held_is_at_most_the_file),
		cmocka_unit_test(walks_lists_to_their_end),
		cmocka_unit_test(finds_loops_on_their_second_lap),
		cmocka_unit_test(bounds_lists_by_the_core),
		cmocka_unit_test(bounds_arrays_by_the_core),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
