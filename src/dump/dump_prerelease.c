/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dump_prerelease.c - the go1.3 heap dump layout of the runtime patch that came before
 * Go 1.3's release (seed 002, the hprof converter's description; docs/heap-dumps.md),
 * read into the same model as the other formats. It has the released go1.3's header;
 * its first record, params, is of kind 10 where the release's is 6, and that tells them
 * apart.
 *
 * Its kinds: 1 object, 3 EOF, 4 stack root, 5 data root, 6 other root, 7 type,
 * 8 goroutine, 9 stack frame, 10 params, 11 finalizer, 12 itab. Objects, itabs, other
 * roots and finalizers are laid out as in the released go1.3 (dump_legacy.c reads them)
 * or go1.5; types count their fields and number their kinds from 0 (dump_legacy.c too).
 * What this file reads differs more:
 *
 *   - roots are single pointers at known addresses (a stack root: where, the pointer,
 *     the sp of its frame; a data root: where and the pointer), not segments or frame
 *     contents with field lists: they become struct hr_root_pointer;
 *   - a frame has no contents, no depth and no goroutine, only its parent's sp, and a
 *     goroutine only its top frame's sp: once all records are read, each goroutine's
 *     frames are linked from its top frame down, and each stack root to its frame;
 *   - goroutines lack the context, M, defer and panic words.
 *
 * The links are checked: every frame on exactly one goroutine's stack, every chain of
 * parents ending at 0, every stack root in a frame some record describes.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "dump_cursor.h"

/* A stack frame record, until its goroutine is known. */
struct pre_frame {
	uint64_t sp, parent;
	uint64_t entry_pc, pc;
	struct hr_bytes func_name;
	uint64_t rec;           /* where its record starts, for errors */
	uint32_t index;         /* its index in d->frames once linked; HR_NO_FRAME before */
};

/* A stack root record, until its frame is known. */
struct pre_root {
	uint64_t addr, ptr, frame_sp;
	uint64_t rec;
	uint32_t frame;         /* its frame's index in d->frames, once linked */
};

struct prerelease {
	VEC(struct pre_frame, frames);
	VEC(struct pre_root, roots);    /* stack roots; data roots go straight to the model */
	VEC(uint64_t, goroutine_recs);  /* where each goroutine's record starts */
};

bool prerelease_detect(const struct cursor *c)
{
	/* a one-byte uvarint 10: params, the pre-release layout's first record */
	return c->d->dump.minor == 3 && c->pos < c->end && *c->pos == 10;
}

int prerelease_begin(struct cursor *c)
{
	c->d->prov.prerelease = true;
	c->pre = calloc(1, sizeof(*c->pre));
	return c->pre ? HR_OK : cur_nomem(c);
}

void prerelease_end(struct cursor *c)
{
	if (!c->pre)
		return;
	free(c->pre->frames);
	free(c->pre->roots);
	free(c->pre->goroutine_recs);
	free(c->pre);
	c->pre = NULL;
}

unsigned prerelease_kind(uint64_t raw)
{
	static const unsigned kinds[] = {
		[1] = HR_REC_OBJECT,      [3] = HR_REC_EOF,         [4] = HR_REC_STACK_ROOT,
		[5] = HR_REC_DATA_ROOT,   [6] = HR_REC_OTHER_ROOT,  [7] = HR_REC_TYPE,
		[8] = HR_REC_GOROUTINE,   [9] = HR_REC_STACK_FRAME, [10] = HR_REC_PARAMS,
		[11] = HR_REC_FINALIZER,  [12] = HR_REC_ITAB,
	};

	if (raw == 0 || raw == 2 || raw >= sizeof(kinds) / sizeof(kinds[0]))
		return HR_REC_KIND_COUNT;
	return kinds[raw];
}

/* --- records -------------------------------------------------------------------------- */

static int parse_stack_root(struct cursor *c)
{
	uint64_t v[3];
	int rc = cur_uvarints(c, v, 3, "stack root field");
	struct pre_root *r;

	if (rc)
		return rc;
	if (!(r = VEC_PUSH(c->pre, roots)))
		return cur_nomem(c);
	*r = (struct pre_root){ v[0], v[1], v[2], cur_offset(c, c->rec), HR_NO_FRAME };
	return HR_OK;
}

static int parse_data_root(struct cursor *c)
{
	uint64_t v[2];
	int rc = cur_uvarints(c, v, 2, "data root field");
	struct hr_root_pointer *r;

	if (rc)
		return rc;
	if (!(r = VEC_PUSH(c->d, root_pointers)))
		return cur_nomem(c);
	*r = (struct hr_root_pointer){ v[0], v[1], HR_NO_FRAME };
	return HR_OK;
}

/* address, top frame's sp, id, creating PC, status, system?, background?, wait */
static int parse_goroutine_pre(struct cursor *c)
{
	struct hr_dump *d = c->d;
	struct hr_goroutine g = { 0 };
	uint64_t head[5], *rec;
	int rc;

	if ((rc = cur_uvarints(c, head, 5, "goroutine field")) ||
	    (rc = cur_bool(c, &g.is_system, "system flag")) ||
	    (rc = cur_bool(c, &g.is_background, "background flag")) ||
	    (rc = cur_uvarint(c, &g.wait_since, "wait time")) ||
	    (rc = cur_bytes(c, &g.wait_reason, "wait reason")))
		return rc;
	g.addr = head[0];
	g.sp = head[1];
	g.goid = head[2];
	g.gopc = head[3];
	g.status = head[4];
	if (d->goroutines_n >= UINT32_MAX)
		return cur_fail(c, c->rec, "too many goroutines");
	struct hr_goroutine *slot = VEC_PUSH(d, goroutines);
	if (!slot || !(rec = VEC_PUSH(c->pre, goroutine_recs)))
		return cur_nomem(c);
	*slot = g;
	*rec = cur_offset(c, c->rec);
	return HR_OK;
}

/* sp, parent's sp (0 at the bottom), entry PC, PC, function name */
static int parse_frame_pre(struct cursor *c)
{
	struct pre_frame f = { .index = HR_NO_FRAME };
	struct pre_frame *slot;
	int rc;

	if ((rc = cur_uvarint(c, &f.sp, "stack pointer")) ||
	    (rc = cur_uvarint(c, &f.parent, "parent's stack pointer")) ||
	    (rc = cur_uvarint(c, &f.entry_pc, "entry PC")) ||
	    (rc = cur_uvarint(c, &f.pc, "PC")) ||
	    (rc = cur_bytes(c, &f.func_name, "function name")))
		return rc;
	if (!f.sp)
		return cur_fail(c, c->rec, "stack frame record with sp 0");
	if (c->pre->frames_n >= UINT32_MAX - 1)
		return cur_fail(c, c->rec, "too many stack frames");
	if (!(slot = VEC_PUSH(c->pre, frames)))
		return cur_nomem(c);
	f.rec = cur_offset(c, c->rec);
	*slot = f;
	return HR_OK;
}

record_parser prerelease_parser(unsigned kind)
{
	switch (kind) {
	case HR_REC_STACK_ROOT:
		return parse_stack_root;
	case HR_REC_DATA_ROOT:
		return parse_data_root;
	case HR_REC_GOROUTINE:
		return parse_goroutine_pre;
	case HR_REC_STACK_FRAME:
		return parse_frame_pre;
	default:
		return NULL;
	}
}

/* --- linking frames and roots ------------------------------------------------------------ */

static int cmp_frame_sp(const void *a, const void *b)
{
	const struct pre_frame *x = a, *y = b;

	return (x->sp > y->sp) - (x->sp < y->sp);
}

/* The frame record with stack pointer sp (frames sorted by sp), or NULL. */
static struct pre_frame *frame_at(const struct prerelease *pre, uint64_t sp)
{
	struct pre_frame key = { .sp = sp };

	if (!pre->frames_n) /* no frame records: bsearch() of NULL, even of nothing, is undefined */
		return NULL;
	return bsearch(&key, pre->frames, pre->frames_n, sizeof(key), cmp_frame_sp);
}

/* Points c at the record of `kind` that starts at byte rec, for cur_fail(); returns it. */
static const uint8_t *record_at(struct cursor *c, uint64_t rec, unsigned kind)
{
	c->rec = c->d->map + rec;
	c->kind = kind;
	return c->rec;
}

/* Goroutine gi's frames, from its top frame down its parents, appended to d->frames. */
static int link_stack(struct cursor *c, uint32_t gi)
{
	struct hr_dump *d = c->d;
	struct hr_goroutine *g = &d->goroutines[gi];
	uint64_t sp = g->sp, child = 0, rec = c->pre->goroutine_recs[gi];
	unsigned rec_kind = HR_REC_GOROUTINE;

	g->first_frame = (uint32_t)d->frames_n;
	for (uint64_t depth = 0; sp; depth++) {
		struct pre_frame *f = frame_at(c->pre, sp);
		struct hr_frame *slot;

		if (!f)
			return cur_fail(c, record_at(c, rec, rec_kind), rec_kind == HR_REC_GOROUTINE
				       ? "the goroutine's top frame, at sp 0x%" PRIx64 ", has no stack frame record"
				       : "the frame's parent, at sp 0x%" PRIx64 ", has no stack frame record", sp);
		if (f->index != HR_NO_FRAME)
			return cur_fail(c, record_at(c, f->rec, HR_REC_STACK_FRAME),
				       "the frame at sp 0x%" PRIx64 " is on a stack twice (its parents "
				       "loop, or two goroutines share it)", sp);
		if (!(slot = VEC_PUSH(d, frames)))
			return cur_nomem(c);
		f->index = (uint32_t)(d->frames_n - 1);
		*slot = (struct hr_frame){ .sp = sp, .depth = depth, .child_sp = child,
					   .entry_pc = f->entry_pc, .pc = f->pc, .cont_pc = f->pc,
					   .func_name = f->func_name, .goroutine = gi };
		g->frame_count++;
		child = sp;
		sp = f->parent;
		rec = f->rec;
		rec_kind = HR_REC_STACK_FRAME;
	}
	return HR_OK;
}

static int cmp_root_frame(const void *a, const void *b)
{
	const struct pre_root *x = a, *y = b;

	if (x->frame != y->frame)
		return x->frame < y->frame ? -1 : 1;
	return (x->rec > y->rec) - (x->rec < y->rec); /* of one frame, in the file's order */
}

/* Stack roots after the data roots, each with its frame; in the order of their frames. */
static int link_stack_roots(struct cursor *c)
{
	struct prerelease *pre = c->pre;
	struct hr_root_pointer *slot;

	for (size_t i = 0; i < pre->roots_n; i++) {
		struct pre_root *r = &pre->roots[i];
		const struct pre_frame *f = frame_at(pre, r->frame_sp);

		if (!f)
			return cur_fail(c, record_at(c, r->rec, HR_REC_STACK_ROOT),
				       "the stack root's frame, at sp 0x%" PRIx64 ", has no stack frame record",
				       r->frame_sp);
		r->frame = f->index;
	}
	if (pre->roots_n)
		qsort(pre->roots, pre->roots_n, sizeof(*pre->roots), cmp_root_frame);
	for (size_t i = 0; i < pre->roots_n; i++) {
		if (!(slot = VEC_PUSH(c->d, root_pointers)))
			return cur_nomem(c);
		*slot = (struct hr_root_pointer){ pre->roots[i].addr, pre->roots[i].ptr,
						  pre->roots[i].frame };
	}
	return HR_OK;
}

int prerelease_finish(struct cursor *c)
{
	struct prerelease *pre = c->pre;
	int rc = HR_OK;

	if (pre->frames_n)
		qsort(pre->frames, pre->frames_n, sizeof(*pre->frames), cmp_frame_sp);
	for (size_t i = 1; i < pre->frames_n; i++)
		if (pre->frames[i].sp == pre->frames[i - 1].sp)
			return cur_fail(c, record_at(c, pre->frames[i].rec, HR_REC_STACK_FRAME),
				       "a second stack frame record with sp 0x%" PRIx64, pre->frames[i].sp);
	for (size_t gi = 0; gi < c->d->goroutines_n && !rc; gi++)
		rc = link_stack(c, (uint32_t)gi);
	for (size_t i = 0; i < pre->frames_n && !rc; i++)
		if (pre->frames[i].index == HR_NO_FRAME)
			rc = cur_fail(c, record_at(c, pre->frames[i].rec, HR_REC_STACK_FRAME),
				     "the frame at sp 0x%" PRIx64 " is on no goroutine's stack (no goroutine's "
				     "top frame leads to it)", pre->frames[i].sp);
	return rc ? rc : link_stack_roots(c);
}
