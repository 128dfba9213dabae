/* SPDX-License-Identifier: Apache-2.0 */
/*
 * unwind.c - a goroutine's frames, unwound through the function table the way the
 * runtime's unwinder walks them, each with the pointer slots runtime.WriteHeapDump
 * writes for it (runtime/heapdump.go, dumpframe):
 *
 *   - the frame is [sp, fp): fp = sp + the pcsp table's value at pc, plus the return
 *     address on amd64; the caller's pc is the saved return address (at fp - 8 on
 *     amd64; on arm64, the link register, saved at sp by a function with a frame);
 *   - its live slots: the callee's argument map (the outgoing arguments, at the offset
 *     of the callee's arguments), then the locals map chosen by the stack map index at
 *     pc - 1 (pc at a function's entry: index 0), below varp (fp less the return address
 *     and the saved frame pointer); without maps, every word of those areas, as the
 *     dump would write them.
 *
 * Architecture: a function table whose PC quantum is 4 is arm64's (link register,
 * 8-byte minimum frame), 1 is amd64's. Names, not the runtime's function IDs (numbered
 * differently across releases), pick out runtime.sigpanic and the other injected calls.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "pclntab_internal.h"

#define MAX_FRAMES 1000000
#define MAX_MAP_BITS (1u << 24)

/* A stack map's bit vector: nbit bits, or nbit < 0 for "no map". */
struct bitvec {
	int64_t nbit;
	uint8_t *bytes;
	size_t cap;
};

/* What the frame below (the callee) leaves for its caller, as dumpframe's childInfo. */
struct child {
	struct bitvec args;
	uint64_t argoff, arglen, sp, depth;
};

struct unwind {
	const struct hr_pclntab *p;
	hr_pclntab_read_fn read;
	void *read_ctx;
	struct hr_error *err;
	bool lr_arch;
	uint64_t ps, min_frame;
	uint64_t *bits;
	size_t bits_cap;
	struct bitvec locals;
	struct child child;
};

static bool read_word(struct unwind *u, uint64_t addr, uint64_t *v)
{
	*v = 0;
	return u->read(u->read_ctx, addr, v, (size_t)u->ps) == 0;
}

static bool named(const struct unwind *u, const struct pcln_func *f, const char *name)
{
	size_t len, n = strlen(name);
	const char *s = pcln_name(u->p, f, &len);

	return len == n && !memcmp(s, name, n);
}

/* Map number index of the stackmap at addr into bv; bv->nbit -1 when there is none. */
static void stackmap_data(struct unwind *u, uint64_t addr, int32_t index, struct bitvec *bv)
{
	int32_t head[2]; /* n (maps), nbit (bits per map) */
	size_t nbytes;

	bv->nbit = -1;
	if (!addr || hr_image_read(&u->p->im, addr, head, sizeof(head), NULL) || index < 0 ||
	    index >= head[0] || head[1] < 0 || (uint32_t)head[1] > MAX_MAP_BITS)
		return;
	nbytes = ((size_t)head[1] + 7) / 8;
	if (nbytes > bv->cap) {
		uint8_t *b = realloc(bv->bytes, nbytes);

		if (!b)
			return;
		bv->bytes = b;
		bv->cap = nbytes;
	}
	if (nbytes && hr_image_read(&u->p->im, addr + 8 + (uint64_t)index * nbytes, bv->bytes,
				     nbytes, NULL))
		return;
	bv->nbit = head[1];
}

static void set_word(struct unwind *u, uint64_t off, uint64_t nwords)
{
	if (off % u->ps == 0 && off / u->ps < nwords)
		hr_bit_set(u->bits, off / u->ps);
}

static void set_map(struct unwind *u, const struct bitvec *bv, uint64_t off, uint64_t nwords)
{
	for (int64_t i = 0; i < bv->nbit; i++)
		if (bv->bytes[i / 8] >> (i % 8) & 1)
			set_word(u, off + (uint64_t)i * u->ps, nwords);
}

/* The slots of the frame [sp, fp) dumpframe writes, into u->bits. */
static int frame_bits(struct unwind *u, const struct pcln_func *f, uint64_t pc, uint64_t sp,
		      uint64_t fp, uint64_t varp, int32_t *pcdata)
{
	uint64_t nwords = (fp - sp) / u->ps, locals = pcln_funcdata(u->p, f, PCLN_FUNCDATA_LOCALS);
	size_t need = (size_t)hr_bit_words(nwords) + 1;
	int32_t head[2] = { 0, 0 };

	if (need > u->bits_cap) {
		uint64_t *b = realloc(u->bits, need * sizeof(*b));

		if (!b)
			return hr_error_set(u->err, HR_ENOMEM, "out of memory");
		u->bits = b;
		u->bits_cap = need;
	}
	memset(u->bits, 0, need * sizeof(*u->bits));
	*pcdata = pc != f->entry ? pcln_pcdata(u->p, f, PCLN_PCDATA_STACKMAP, pc - 1) : -1;
	if (*pcdata == -1)
		*pcdata = 0; /* the prologue, as the dump assumes */
	if (u->child.args.nbit >= 0)
		set_map(u, &u->child.args, u->child.argoff, nwords);
	else
		for (uint64_t off = u->child.argoff; off < u->child.argoff + u->child.arglen; off += u->ps)
			set_word(u, off, nwords);
	if (locals && hr_image_read(&u->p->im, locals, head, sizeof(head), NULL))
		locals = 0;
	if (!locals) {
		for (uint64_t off = u->child.arglen; off < varp - sp; off += u->ps)
			set_word(u, off, nwords);
	} else if (head[0] < 0) {
		uint64_t size = (uint64_t)-(int64_t)head[0];

		for (uint64_t off = varp - sp >= size ? varp - size - sp : 0; off < varp - sp; off += u->ps)
			set_word(u, off, nwords);
	} else if (head[0] > 0) {
		stackmap_data(u, locals, *pcdata, &u->locals);
		if (u->locals.nbit >= 0 && varp - sp >= (uint64_t)u->locals.nbit * u->ps)
			set_map(u, &u->locals, varp - (uint64_t)u->locals.nbit * u->ps - sp, nwords);
	}
	return HR_OK;
}

static int emit_frame(struct unwind *u, const struct pcln_func *f, uint64_t pc, uint64_t sp,
		      uint64_t fp, uint64_t cont_pc, hr_pclntab_frame_fn emit, void *emit_ctx)
{
	static const char unknown[] = "unknown function";
	uint64_t varp = fp - (u->lr_arch ? 0 : u->ps);
	struct hr_pclntab_frame out;
	int32_t pcdata = 0;
	int rc;

	if (varp > sp)
		varp -= u->ps; /* the saved frame pointer (frame pointers on amd64 and arm64) */
	if ((rc = frame_bits(u, f, pc, sp, fp, varp, &pcdata)))
		return rc;
	out = (struct hr_pclntab_frame){ .sp = sp, .fp = fp, .pc = pc, .entry_pc = f->entry,
				   .cont_pc = cont_pc, .child_sp = u->child.sp,
				   .depth = u->child.depth, .bits = u->bits };
	out.name = pcln_name(u->p, f, &out.name_len);
	if (!out.name_len) {
		out.name = unknown;
		out.name_len = sizeof(unknown) - 1;
	}
	if ((rc = emit(emit_ctx, &out)))
		return rc;
	/* what this frame leaves its caller */
	u->child.argoff = u->min_frame; /* the callee's argp - fp, as an offset in its caller */
	u->child.arglen = f->args == PCLN_ARGS_UNKNOWN || f->args < 0 ? 0 : (uint64_t)f->args;
	u->child.sp = sp;
	u->child.depth++;
	stackmap_data(u, pcln_funcdata(u->p, f, PCLN_FUNCDATA_ARGS), pcdata, &u->child.args);
	return HR_OK;
}

static int stopped_at(struct unwind *u, const char *what, uint64_t pc, uint64_t sp)
{
	return hr_error_set(u->err, HR_EINPUT, "cannot unwind the stack: %s (pc 0x%" PRIx64
			    ", sp 0x%" PRIx64 ")", what, pc, sp);
}

/* The caller's PC of the frame [sp, fp) of f, 0 where the stack ends. */
static uint64_t caller_pc(struct unwind *u, const struct pcln_func *f, uint64_t sp, uint64_t fp,
			  uint64_t lr, bool innermost)
{
	if (f->flag & PCLN_FLAG_TOPFRAME)
		return 0;
	if ((f->flag & PCLN_FLAG_SPWRITE) && !innermost)
		return 0; /* a function that moved SP: its frame size is unknown */
	if (u->lr_arch) {
		if ((innermost && sp < fp) || !lr)
			read_word(u, sp, &lr);
	} else if (!lr) {
		read_word(u, fp - u->ps, &lr);
	}
	return lr;
}

static int walk(struct unwind *u, uint64_t pc, uint64_t sp, uint64_t lr, uint64_t stack_hi,
		hr_pclntab_frame_fn emit, void *emit_ctx)
{
	bool innermost = true, after_sigpanic = false;

	if (!pc) { /* a call through nil: start in the caller */
		read_word(u, sp, &pc);
		if (!u->lr_arch)
			sp += u->ps;
		lr = 0;
	}
	for (unsigned n = 0; n < MAX_FRAMES; n++) {
		struct pcln_func f, caller;
		int32_t delta;
		uint64_t fp, cont_pc;
		int rc;
		bool injected;

		if (!pcln_find(u->p, pc, &f))
			return innermost ? stopped_at(u, "no function at pc", pc, sp) : HR_OK;
		if (!f.pcsp)
			return HR_OK; /* no frame information: an external function */
		delta = pcln_value(u->p, &f, f.pcsp, pc);
		if (delta < 0)
			return stopped_at(u, "no frame size at pc", pc, sp);
		fp = sp + (uint64_t)delta + (u->lr_arch ? 0 : u->ps);
		if (fp > stack_hi || fp < sp)
			return stopped_at(u, "a frame past the end of the stack", pc, sp);
		lr = caller_pc(u, &f, sp, fp, lr, innermost);
		cont_pc = !after_sigpanic ? pc : f.deferreturn ? f.entry + f.deferreturn + 1 : 0;
		if ((rc = emit_frame(u, &f, pc, sp, fp, cont_pc, emit, emit_ctx)))
			return rc;
		if (!lr || !pcln_find(u->p, lr, &caller))
			return HR_OK;
		if (pc == lr && sp == fp)
			return stopped_at(u, "stuck", pc, sp);
		injected = named(u, &f, "runtime.sigpanic") || named(u, &f, "runtime.asyncPreempt") ||
			   named(u, &f, "runtime.debugCallV2");
		after_sigpanic = named(u, &f, "runtime.sigpanic");
		pc = lr;
		lr = 0;
		sp = fp;
		innermost = false;
		if (u->lr_arch && injected) { /* the signal handler saved LR on the stack */
			uint64_t x;

			read_word(u, sp, &x);
			sp += 16; /* the minimum frame, aligned to the stack alignment */
			if (!pcln_find(u->p, pc, &caller))
				pc = x;
			else if (pcln_value(u->p, &caller, caller.pcsp, pc) == 0)
				lr = x;
		}
	}
	return stopped_at(u, "more than a million frames", pc, sp);
}

int hr_pclntab_unwind(const struct hr_pclntab *p, hr_pclntab_read_fn read, void *read_ctx, uint64_t pc,
		uint64_t sp, uint64_t lr, uint64_t stack_hi, hr_pclntab_frame_fn emit, void *emit_ctx,
		struct hr_error *err)
{
	struct unwind u = { .p = p, .read = read, .read_ctx = read_ctx, .err = err,
			    .lr_arch = p->min_lc == 4, .ps = p->ptr_size,
			    .child = { .args = { .nbit = -1 } } };
	int rc;

	u.min_frame = u.lr_arch ? 8 : 0;
	rc = walk(&u, pc, sp, lr, stack_hi, emit, emit_ctx);
	free(u.bits);
	free(u.locals.bytes);
	free(u.child.args.bytes);
	return rc;
}
