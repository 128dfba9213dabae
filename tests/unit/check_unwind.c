/* SPDX-License-Identifier: Apache-2.0 */
/*
 * check_unwind BINARY DUMP - unwinds every goroutine of a heap dump with heapref's own
 * unwinder (src/core) over the dump's stack memory, and compares each frame with the
 * frame records the runtime wrote: sp, depth, child sp, size, entry, pc, continuation
 * pc, function name and pointer bitmap. One line per mismatch, then a summary; exit 1
 * on any mismatch or error.
 */
#include "heapref/binary.h"

#include "heapref/binary.h"
#include "heapref/dump.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* The memory the walk may read: the goroutine's frames' contents (each in its own record
   of the dump), then heap objects and the binary's sections (the reflect stubs' method
   values point there). */
struct stack_mem {
	const struct hr_frame *frames;
	uint32_t count;
	const struct hr_dump *dump;
	const struct hr_binary *bin;
};

static int read_elsewhere(const struct stack_mem *m, uint64_t addr, void *buf, size_t len)
{
	int64_t i = hr_dump_object_at(m->dump, addr);
	if (i >= 0) {
		struct hr_object o = hr_dump_object(m->dump, (size_t)i);
		if (addr < o.addr || addr - o.addr > o.size || o.size - (addr - o.addr) < len)
			return 1;
		memcpy(buf, o.data + (addr - o.addr), len);
		return 0;
	}
	struct hr_error err = { 0 };
	return hr_binary_read(m->bin, addr, buf, len, &err) != 0;
}

static int read_stack(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct stack_mem *m = ctx;
	uint8_t *out = buf;
	while (len > 0) {
		const struct hr_frame *f = NULL;
		for (uint32_t i = 0; i < m->count && !f; i++)
			if (addr >= m->frames[i].sp && addr - m->frames[i].sp < m->frames[i].contents.len)
				f = &m->frames[i];
		if (!f)
			return read_elsewhere(m, addr, out, len);
		uint64_t off = addr - f->sp, n = f->contents.len - off;
		if (n > len)
			n = len;
		memcpy(out, f->contents.ptr + off, n);
		out += n;
		addr += n;
		len -= n;
	}
	return 0;
}

struct compare {
	const struct hr_dump *dump;
	const struct hr_goroutine *g;
	const struct hr_frame *frames;
	unsigned ptr_size;
	uint64_t seen, frames_checked, mismatches;
};

static void mismatch(struct compare *c, uint64_t depth, const char *what, uint64_t want, uint64_t got)
{
	printf("goroutine %" PRIu64 " frame %" PRIu64 ": %s: dump 0x%" PRIx64 ", unwinder 0x%" PRIx64 "\n",
	       c->g->goid, depth, what, want, got);
	c->mismatches++;
}

static void compare_bits(struct compare *c, const struct hr_frame *d, const struct hr_pclntab_frame *f)
{
	uint64_t nwords = d->contents.len / c->ptr_size;
	if (f->fp - f->sp != d->contents.len)
		return; /* reported as a size mismatch already */
	for (uint64_t i = 0; i < nwords; i++) {
		bool want = hr_dump_frame_ptr_bit(c->dump, d, i);
		bool got = f->bits[i / 64] >> (i % 64) & 1;
		if (want != got) {
			printf("goroutine %" PRIu64 " frame %" PRIu64 " (%.*s): pointer bit of word %" PRIu64
			       " (sp+%" PRIu64 "): dump %d, unwinder %d\n",
			       c->g->goid, f->depth, (int)f->name_len, f->name, i, i * c->ptr_size, want, got);
			c->mismatches++;
		}
	}
}

static int compare_frame(void *ctx, const struct hr_pclntab_frame *f)
{
	struct compare *c = ctx;
	uint64_t i = c->seen++;
	if (i >= c->g->frame_count) {
		printf("goroutine %" PRIu64 ": unwinder has frame %" PRIu64 " (%.*s), the dump has %u frames\n",
		       c->g->goid, i, (int)f->name_len, f->name, c->g->frame_count);
		c->mismatches++;
		return 0;
	}
	const struct hr_frame *d = &c->frames[c->g->first_frame + i];
	c->frames_checked++;
	if (d->sp != f->sp) mismatch(c, i, "sp", d->sp, f->sp);
	if (d->depth != f->depth) mismatch(c, i, "depth", d->depth, f->depth);
	if (d->child_sp != f->child_sp) mismatch(c, i, "child sp", d->child_sp, f->child_sp);
	if (d->contents.len != f->fp - f->sp) mismatch(c, i, "size", d->contents.len, f->fp - f->sp);
	if (d->entry_pc != f->entry_pc) mismatch(c, i, "entry pc", d->entry_pc, f->entry_pc);
	if (d->pc != f->pc) mismatch(c, i, "pc", d->pc, f->pc);
	if (d->cont_pc != f->cont_pc) mismatch(c, i, "cont pc", d->cont_pc, f->cont_pc);
	if (d->func_name.len != f->name_len || memcmp(d->func_name.ptr, f->name, f->name_len) != 0) {
		printf("goroutine %" PRIu64 " frame %" PRIu64 ": name: dump %.*s, unwinder %.*s\n", c->g->goid, i,
		       (int)d->func_name.len, (const char *)d->func_name.ptr, (int)f->name_len, f->name);
		c->mismatches++;
	}
	compare_bits(c, d, f);
	return 0;
}

/*
 * The link register the runtime started from. The dump does not record gp.sched.lr; it is
 * 0 except where morestack stopped a goroutine at the entry of a function, before its
 * prologue saved LR (arm64): then the top frame is empty and sched.lr is the caller's pc,
 * the next frame's. On amd64 the unwinder ignores it.
 */
static uint64_t sched_lr(const struct hr_goroutine *g, const struct hr_frame *first)
{
	return g->frame_count > 1 && first->contents.len == 0 ? first[1].pc : 0;
}

static void check_goroutine(const struct hr_pclntab *p, const struct hr_binary *bin, struct compare *c)
{
	const struct hr_frame *first = &c->frames[c->g->first_frame];
	const struct hr_frame *last = &c->frames[c->g->first_frame + c->g->frame_count - 1];
	struct stack_mem mem = { first, c->g->frame_count, c->dump, bin };
	uint64_t hi = last->sp + last->contents.len;
	struct hr_error err = { 0 };
	c->seen = 0;
	/* the frames' memory must be one range for the walk to read it as a stack */
	for (uint32_t i = 1; i < c->g->frame_count; i++) {
		const struct hr_frame *a = first + i - 1, *b = first + i;
		if (a->sp + a->contents.len != b->sp) {
			printf("goroutine %" PRIu64 ": frames %u and %u are not contiguous\n", c->g->goid, i - 1, i);
			c->mismatches++;
			return;
		}
	}
	int rc = hr_pclntab_unwind(p, read_stack, &mem, first->pc, c->g->sp, sched_lr(c->g, first), hi, compare_frame, c,
			     &err);
	if (rc) {
		printf("goroutine %" PRIu64 ": unwind failed: %s\n", c->g->goid, err.msg);
		c->mismatches++;
	} else if (c->seen != c->g->frame_count) {
		printf("goroutine %" PRIu64 ": unwinder gave %" PRIu64 " frames, the dump has %u\n", c->g->goid,
		       c->seen, c->g->frame_count);
		c->mismatches++;
	}
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: check_unwind BINARY DUMP\n");
		return 2;
	}
	struct hr_error err = { 0 };
	struct hr_binary *bin = hr_binary_open(argv[1], &err);
	struct hr_dump *dump = bin ? hr_dump_open(argv[2], &err) : NULL;
	struct hr_pclntab *p = NULL;
	if (!dump || !(p = hr_pclntab_open(&(struct hr_image){ bin, 0 }, &err))) {
		fprintf(stderr, "check_unwind: %s\n", err.msg);
		hr_dump_free(dump);
		hr_binary_free(bin);
		return 2;
	}
	size_t ng, nf;
	const struct hr_goroutine *gs = hr_dump_goroutines(dump, &ng);
	struct compare c = { .dump = dump, .frames = hr_dump_frames(dump, &nf),
			     .ptr_size = hr_dump_params(dump)->ptr_size };
	uint64_t checked = 0;
	for (size_t i = 0; i < ng; i++) {
		if (gs[i].frame_count == 0)
			continue;
		c.g = &gs[i];
		check_goroutine(p, bin, &c);
		checked++;
	}
	printf("goroutines %" PRIu64 ", frames %" PRIu64 ", mismatches %" PRIu64 "\n", checked,
	       c.frames_checked, c.mismatches);
	hr_pclntab_free(p);
	hr_dump_free(dump);
	hr_binary_free(bin);
	return c.mismatches ? 1 : 0;
}
