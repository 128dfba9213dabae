/* SPDX-License-Identifier: Apache-2.0 */
/*
 * core_roots.c - the roots of a core, read from the runtime as runtime.WriteHeapDump
 * reads them: data and bss with the pointer masks of runtime.firstmoduledata, every
 * goroutine of runtime.allgs that is not dead with its frames (the binary reader's pclntab.c unwinds them and
 * says which slots are live), the finalizers registered on objects (span specials) and
 * queued to run (runtime.allfin), the itabs (runtime.itabTable) and the Ms (runtime.allm).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_internal.h"
#include "heapref/binary.h"

#define G_SCAN 0x1000
#define G_RUNNABLE 1
#define G_RUNNING 2
#define G_SYSCALL 3
#define G_WAITING 4
#define G_COPYSTACK 8
#define G_PREEMPTED 9
#define G_LEAKED 10 /* Go 1.26+: found leaked by a goroutine leak profile; parked, with its stack */

/* --- data and bss ---------------------------------------------------------------------- */

static int read_segment(struct core_reader *r, bool is_data)
{
	const struct rt_layout *L = &r->L;
	uint64_t md = L->firstmoduledata;
	uint64_t lo = cr_field(r, md, is_data ? &L->md_data : &L->md_bss, "moduledata");
	uint64_t hi = cr_field(r, md, is_data ? &L->md_edata : &L->md_ebss, "moduledata");
	uint64_t mask = md + (is_data ? L->md_gcdatamask.off : L->md_gcbssmask.off);
	uint64_t nbits = (uint64_t)(int32_t)cr_field(r, mask, &L->bv_n, "moduledata GC mask");
	uint64_t bytes = cr_field(r, mask, &L->bv_bytedata, "moduledata GC mask");
	uint64_t words = (hi - lo) / r->ps, *bits;
	struct hr_bytes contents;
	uint8_t *raw;
	int rc;

	if (r->failed)
		return cr_fail_report(r);
	if (hi < lo || hi - lo > r->img.held) /* it is memory of the process: in the core */
		return hr_error_set(r->err, HR_EINPUT, "%s: runtime.firstmoduledata gives a %s "
				    "segment 0x%" PRIx64 "-0x%" PRIx64 ", larger than the %" PRIu64
				    " bytes of memory in the core", r->img.path,
				    is_data ? "data" : "bss", lo, hi, r->img.held);
	contents = cr_bytes(r, lo, hi - lo, is_data ? "the data segment" : "the bss segment");
	nbits = nbits < words ? nbits : words;
	bits = cr_scratch_bits(r, words);
	raw = malloc((size_t)(nbits + 7) / 8 + 1);
	if (!bits || !raw) {
		free(raw);
		return hr_error_set(r->err, HR_ENOMEM, "out of memory");
	}
	if (!r->failed && nbits && core_read(&r->img, bytes, raw, (size_t)(nbits + 7) / 8)) {
		free(raw);
		return hr_error_set(r->err, HR_EINPUT, "%s: the GC mask of the %s segment (0x%" PRIx64
				    ") is not in the core", r->img.path, is_data ? "data" : "bss", bytes);
	}
	for (uint64_t i = 0; i < nbits; i++)
		if (raw[i / 8] >> (i % 8) & 1)
			hr_bit_set(bits, i);
	free(raw);
	if (r->failed)
		return cr_fail_report(r);
	rc = hr_dump_build_segment(r->model, is_data, lo, contents, bits, r->err);
	return rc;
}

int core_read_segments(struct core_reader *r)
{
	int rc = read_segment(r, true);

	return rc ? rc : read_segment(r, false);
}

/* --- goroutines ------------------------------------------------------------------------ */

static int read_target(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct core_reader *r = ctx;

	return core_read(&r->img, addr, buf, len);
}

/*
 * Goroutines' stacks are memory of the process, each frame a piece of its goroutine's
 * stack: together they cannot take more than the core holds. Without this bound a
 * corrupt runtime.allgs naming one goroutine many times would unwind its stack as often.
 */
static int charge_frame(struct core_reader *r, const struct hr_pclntab_frame *pf)
{
	uint64_t bytes = pf->fp - pf->sp > r->ps ? pf->fp - pf->sp : r->ps;

	if (hr_add_ok(r->frame_bytes, bytes, &r->frame_bytes) && r->frame_bytes <= r->img.held)
		return HR_OK;
	return hr_error_set(r->err, HR_EINPUT, "%s: the goroutines' frames take more than the %"
			    PRIu64 " bytes of memory in the core, at sp 0x%" PRIx64 " (%.*s; a "
			    "corrupt core?)", r->img.path, r->img.held, pf->sp, (int)pf->name_len,
			    pf->name);
}

static int add_frame(void *ctx, const struct hr_pclntab_frame *pf)
{
	struct core_reader *r = ctx;
	struct hr_frame f = {
		.sp = pf->sp, .depth = pf->depth, .child_sp = pf->child_sp,
		.entry_pc = pf->entry_pc, .pc = pf->pc, .cont_pc = pf->cont_pc,
	};
	int rc = charge_frame(r, pf);

	if (rc)
		return rc;
	f.contents = cr_bytes(r, pf->sp, pf->fp - pf->sp, "a stack frame");
	f.func_name = hr_dump_build_string(r->model, pf->name, pf->name_len);
	if (r->failed)
		return cr_fail_report(r);
	if (!f.func_name.ptr)
		return hr_error_set(r->err, HR_ENOMEM, "out of memory");
	return hr_dump_build_frame(r->model, &f, pf->bits, r->err);
}

/*
 * Unwinds one goroutine into frames of the model. A goroutine that was running when the
 * core was taken may be caught anywhere, between safe points: where its stack cannot be
 * unwound further, it keeps the frames found so far (counted in unwind_stops). Any other
 * goroutine stopped at a safe point, so a stack that does not unwind is a bad core.
 */
static int unwind(struct core_reader *r, const struct hr_goroutine *g,
		  uint64_t pc, uint64_t lr, uint64_t stack_lo, uint64_t stack_hi)
{
	struct hr_error why = { 0 };
	int rc;

	if (g->sp < stack_lo || g->sp >= stack_hi) {
		if (g->status == G_RUNNING) { /* caught where it kept no position on its stack */
			r->unwind_stops++;
			hr_dump_build_partial_stack(r->model);
			return HR_OK;
		}
		return hr_error_set(r->err, HR_EINPUT, "%s: goroutine %" PRIu64 ": its stack pointer "
				    "0x%" PRIx64 " is outside its stack 0x%" PRIx64 "-0x%" PRIx64,
				    r->img.path, g->goid, g->sp, stack_lo, stack_hi);
	}
	rc = hr_pclntab_unwind(r->pcln, read_target, r, pc, g->sp, lr, stack_hi, add_frame, r, &why);

	if (!rc || !why.code)
		return rc; /* done, or add_frame() failed and said why in r->err */
	if (why.code == HR_EINPUT && g->status == G_RUNNING) {
		r->unwind_stops++;
		hr_dump_build_partial_stack(r->model);
		return HR_OK;
	}
	if (why.code == HR_EINPUT)
		return hr_error_set(r->err, HR_EINPUT, "%s: goroutine %" PRIu64 ": %s", r->img.path,
				    g->goid, why.msg);
	return hr_error_set(r->err, why.code, "%s", why.msg);
}

static struct hr_bytes wait_reason(struct core_reader *r, uint64_t reason)
{
	const struct rt_layout *L = &r->L;
	uint64_t s, len;

	if (!L->wait_reason_strings || reason >= L->wait_reason_count)
		return hr_dump_build_string(r->model, "unknown wait reason", 19);
	s = cr_word(r, L->wait_reason_strings + reason * 2 * r->ps, "runtime.waitReasonStrings");
	len = cr_word(r, L->wait_reason_strings + reason * 2 * r->ps + r->ps,
		      "runtime.waitReasonStrings");
	if (r->failed || len > 256)
		return hr_dump_build_string(r->model, "unknown wait reason", 19);
	struct hr_bytes b = cr_bytes(r, s, len, "a wait reason");

	return b.ptr ? hr_dump_build_string(r->model, (const char *)b.ptr, (size_t)b.len) : b;
}

/* The registers of the thread running goroutine g (status running, not in a syscall). */
static const struct core_thread *thread_of(struct core_reader *r, uint64_t g)
{
	uint64_t m = cr_field(r, g, &r->L.g_m, "g.m");
	uint64_t tid = m ? cr_field(r, m, &r->L.m_procid, "m.procid") : 0;

	for (size_t i = 0; tid && i < r->img.nthreads; i++)
		if (r->img.threads[i].tid == tid)
			return &r->img.threads[i];
	return NULL;
}

static bool system_goroutine(struct core_reader *r, uint64_t startpc)
{
	uint64_t entry;
	const char *name;
	size_t len;

	if (!hr_pclntab_func_at(r->pcln, startpc, &entry, &name, &len))
		return false;
	if (len == 12 && !memcmp(name, "runtime.main", 12))
		return false;
	return len > 8 && !memcmp(name, "runtime.", 8);
}

static int read_goroutine(struct core_reader *r, uint64_t gaddr)
{
	const struct rt_layout *L = &r->L;
	uint64_t status = cr_field(r, gaddr, &L->g_status, "g.atomicstatus") & ~(uint64_t)G_SCAN;
	uint64_t syscallsp = cr_field(r, gaddr, &L->g_syscallsp, "g.syscallsp");
	uint64_t pc, sp, lr;
	struct hr_goroutine g = { .addr = gaddr };
	const struct core_thread *t = NULL;
	int rc;

	if (status != G_RUNNABLE && status != G_RUNNING && status != G_SYSCALL &&
	    status != G_WAITING && status != G_COPYSTACK && status != G_PREEMPTED &&
	    status != G_LEAKED)
		return r->failed ? cr_fail_report(r) : HR_OK; /* idle or dead: no stack */
	if (syscallsp) {
		sp = syscallsp;
		pc = cr_field(r, gaddr, &L->g_syscallpc, "g.syscallpc");
		lr = 0;
	} else if (status == G_RUNNING && (t = thread_of(r, gaddr)) &&
		   t->sp >= cr_field(r, gaddr, &L->g_stack_lo, "g.stack.lo") &&
		   t->sp < cr_field(r, gaddr, &L->g_stack_hi, "g.stack.hi")) {
		sp = t->sp, pc = t->pc, lr = t->lr; /* stopped wherever it was, on its stack */
	} else { /* or on the system stack, having saved where it was (systemstack, mcall) */
		sp = cr_field(r, gaddr, &L->g_sched_sp, "g.sched.sp");
		pc = cr_field(r, gaddr, &L->g_sched_pc, "g.sched.pc");
		lr = cr_field(r, gaddr, &L->g_sched_lr, "g.sched.lr");
	}
	g.sp = sp;
	g.goid = cr_field(r, gaddr, &L->g_goid, "g.goid");
	g.gopc = cr_field(r, gaddr, &L->g_gopc, "g.gopc");
	g.status = status;
	g.is_system = system_goroutine(r, cr_field(r, gaddr, &L->g_startpc, "g.startpc"));
	g.wait_since = cr_field(r, gaddr, &L->g_waitsince, "g.waitsince");
	g.wait_reason = wait_reason(r, cr_field(r, gaddr, &L->g_waitreason, "g.waitreason"));
	g.ctxt = cr_field(r, gaddr, &L->g_sched_ctxt, "g.sched.ctxt");
	g.thread = cr_field(r, gaddr, &L->g_m, "g.m");
	g.top_defer = cr_field(r, gaddr, &L->g_defer, "g._defer");
	g.top_panic = cr_field(r, gaddr, &L->g_panic, "g._panic");
	if (r->failed)
		return cr_fail_report(r);
	if (!g.wait_reason.ptr)
		return hr_error_set(r->err, HR_ENOMEM, "out of memory");
	if ((rc = hr_dump_build_goroutine(r->model, &g, r->err)))
		return rc;
	return unwind(r, &g, pc, lr, cr_field(r, gaddr, &L->g_stack_lo, "g.stack.lo"),
		      cr_field(r, gaddr, &L->g_stack_hi, "g.stack.hi"));
}

int core_read_goroutines(struct core_reader *r)
{
	uint64_t base = cr_word(r, r->L.allgs, "runtime.allgs");
	uint64_t n = cr_word(r, r->L.allgs + r->ps, "runtime.allgs");
	int rc = HR_OK;

	if (r->failed)
		return cr_fail_report(r);
	rc = core_check_count(r, "runtime.allgs", n, r->L.g_size > r->ps ? r->L.g_size : r->ps);
	if (rc)
		return rc;
	for (uint64_t i = 0; i < n && !rc; i++) {
		uint64_t g = cr_word(r, base + i * r->ps, "runtime.allgs[]");

		rc = r->failed ? cr_fail_report(r) : g ? read_goroutine(r, g) : HR_OK;
	}
	return rc;
}

/* --- finalizers, itabs, threads -------------------------------------------------------- */

/* The kinds of the specials a dump reads, numbered differently across releases (the
 * runtime's constants, which DWARF does not carry). */
static unsigned special_finalizer(const struct core_reader *r)
{
	return r->go_minor >= 25 ? 2 : 1;
}

static unsigned special_profile(const struct core_reader *r)
{
	return r->go_minor >= 25 ? 4 : r->go_minor >= 23 ? 3 : 2;
}

static int add_special(struct core_reader *r, uint64_t sp, uint64_t obj)
{
	const struct rt_layout *L = &r->L;
	uint64_t kind = cr_field(r, sp, &L->sp_kind, "special.kind");
	struct hr_finalizer f;

	if (kind == special_profile(r) && L->spp_b.present) {
		struct hr_alloc_sample s = { obj, cr_field(r, sp, &L->spp_b, "specialprofile.b") };

		return r->failed ? cr_fail_report(r) : hr_dump_build_alloc_sample(r->model, &s, r->err);
	}
	if (kind != special_finalizer(r))
		return r->failed ? cr_fail_report(r) : HR_OK;
	f.obj = obj;
	f.fn = cr_field(r, sp, &L->spf_fn, "specialfinalizer.fn");
	f.fn_pc = f.fn ? cr_field(r, f.fn, &L->funcval_fn, "funcval.fn") : 0;
	f.arg_type = cr_field(r, sp, &L->spf_fint, "specialfinalizer.fint");
	f.obj_type = cr_field(r, sp, &L->spf_ot, "specialfinalizer.ot");
	return r->failed ? cr_fail_report(r) : hr_dump_build_finalizer(r->model, false, &f, r->err);
}

static int visit_special(struct core_reader *r, struct list_walk *w, uint64_t sp, void *ctx)
{
	const uint64_t *base = ctx;

	(void)w;
	return add_special(r, sp, *base + cr_field(r, sp, &r->L.sp_offset, "special.offset"));
}

void core_specials_begin(struct core_reader *r, struct list_walk *w)
{
	list_walk_begin(w, "the spans' specials", "special", r->L.special_size);
}

int core_span_specials(struct core_reader *r, struct list_walk *w, uint64_t span,
		       uint64_t base)
{
	uint64_t first = cr_field(r, span, &r->L.s_specials, "mspan.specials");

	list_walk_restart(w, "the list of specials of span 0x%" PRIx64, span);
	return core_walk_list(r, w, first, &r->L.sp_next, "special.next", visit_special, &base);
}

/* The queued finalizers of the finalizer block at fb: at most what its array holds. */
static int visit_finblock(struct core_reader *r, struct list_walk *w, uint64_t fb, void *ctx)
{
	const struct rt_layout *L = &r->L;
	uint64_t cnt = cr_field(r, fb, &L->fb_cnt, "finblock.cnt");
	uint64_t room = L->finblock_size > L->fb_fin.off && L->fin_size
				? (L->finblock_size - L->fb_fin.off) / L->fin_size : 4096;
	int rc = HR_OK;

	(void)w;
	(void)ctx;
	if (cnt > room)
		return hr_error_set(r->err, HR_EINPUT, "%s: finalizer block 0x%" PRIx64 " claims %"
				    PRIu64 " finalizers, and has room for %" PRIu64, r->img.path, fb,
				    cnt, room);
	for (uint64_t i = 0; i < cnt && !rc; i++) {
		uint64_t e = fb + L->fb_fin.off + i * L->fin_size;
		struct hr_finalizer f;

		f.obj = cr_field(r, e, &L->fin_arg, "finalizer.arg");
		f.fn = cr_field(r, e, &L->fin_fn, "finalizer.fn");
		f.fn_pc = f.fn ? cr_field(r, f.fn, &L->funcval_fn, "funcval.fn") : 0;
		f.arg_type = cr_field(r, e, &L->fin_fint, "finalizer.fint");
		f.obj_type = cr_field(r, e, &L->fin_ot, "finalizer.ot");
		rc = r->failed ? cr_fail_report(r)
			       : hr_dump_build_finalizer(r->model, true, &f, r->err);
	}
	return rc;
}

int core_read_finalizers(struct core_reader *r)
{
	uint64_t first = cr_word(r, r->L.allfin, "runtime.allfin");
	struct list_walk w;

	list_walk_begin(&w, "runtime.allfin", "finalizer block", r->L.finblock_size);
	return core_walk_list(r, &w, first, &r->L.fb_alllink, "finblock.alllink", visit_finblock,
			      NULL);
}

static int read_itab_table(struct core_reader *r)
{
	const struct rt_layout *L = &r->L;
	uint64_t table = L->itab_table ? cr_word(r, L->itab_table, "runtime.itabTable") : 0;
	uint64_t size = table ? cr_field(r, table, &L->it_size, "itabTable.size") : 0;
	int rc = r->failed ? cr_fail_report(r) : core_check_count(r, "runtime.itabTable", size, r->ps);

	for (uint64_t i = 0; i < size && !rc; i++) {
		uint64_t tab = cr_word(r, table + L->it_entries.off + i * r->ps, "itabTable.entries");
		struct hr_itab it = { tab, 0 };

		if (!tab)
			continue;
		it.type_addr = cr_field(r, tab, &L->itab_type, "itab type");
		rc = r->failed ? cr_fail_report(r) : hr_dump_build_itab(r->model, &it, r->err);
	}
	return rc ? rc : r->failed ? cr_fail_report(r) : HR_OK;
}

static int visit_m(struct core_reader *r, struct list_walk *w, uint64_t m, void *ctx)
{
	struct hr_os_thread t = { m, cr_field(r, m, &r->L.m_id, "m.id"),
				  cr_field(r, m, &r->L.m_procid, "m.procid") };

	(void)w;
	(void)ctx;
	return r->failed ? cr_fail_report(r) : hr_dump_build_os_thread(r->model, &t, r->err);
}

int core_read_itabs(struct core_reader *r)
{
	struct list_walk w;
	int rc = read_itab_table(r);

	if (rc || !r->L.allm)
		return rc;
	list_walk_begin(&w, "runtime.allm", "M", r->L.m_size);
	return core_walk_list(r, &w, cr_word(r, r->L.allm, "runtime.allm"), &r->L.m_alllink,
			      "m.alllink", visit_m, NULL);
}

/* --- the memory profile ------------------------------------------------------------------ */

#define MAX_STACK 1024 /* runtime.maxProfStackDepth is at most this */

/* One PC of a bucket's stack: function (the one inlined there, if any), file and line,
 * or "(0x...)", "?" and 0 for a PC in no function. */
static int stack_frame(struct core_reader *r, uint64_t pc, bool caller,
		       struct hr_memprof_frame *out)
{
	const char *func, *file;
	size_t func_len, file_len;
	char unknown[32];

	if (hr_pclntab_source(r->pcln, pc, caller, &func, &func_len, &file, &file_len, &out->line,
			      &out->inlined)) {
		out->func = hr_dump_build_string(r->model, func, func_len);
		out->file = hr_dump_build_string(r->model, file, file_len);
	} else {
		snprintf(unknown, sizeof(unknown), "(0x%" PRIx64 ")", pc);
		out->func = hr_dump_build_string(r->model, unknown, strlen(unknown));
		out->file = hr_dump_build_string(r->model, "?", 1);
		out->line = 0;
		out->inlined = false;
	}
	return out->func.ptr && out->file.ptr ? HR_OK
					      : hr_error_set(r->err, HR_ENOMEM, "out of memory");
}

/* The bucket at b, charged to w by its size with its stack and record. */
static int visit_bucket(struct core_reader *r, struct list_walk *w, uint64_t b, void *ctx)
{
	const struct rt_layout *L = &r->L;
	struct hr_memprof_frame *frames = ctx;
	struct hr_memprof_bucket mb = { .id = b };
	uint64_t nstk = cr_field(r, b, &L->bk_nstk, "bucket.nstk"), record;
	int rc = HR_OK;

	if (nstk > MAX_STACK)
		return hr_error_set(r->err, HR_EINPUT, "%s: memory profile bucket 0x%" PRIx64
				    " claims %" PRIu64 " frames", r->img.path, b, nstk);
	if ((rc = list_walk_charge(r, w, nstk * r->ps + L->memrecord_size)))
		return rc;
	mb.size = cr_field(r, b, &L->bk_size, "bucket.size");
	record = b + L->bucket_size + nstk * r->ps;
	mb.allocs = cr_field(r, record, &L->mr_allocs, "memRecord.active.allocs");
	mb.frees = cr_field(r, record, &L->mr_frees, "memRecord.active.frees");
	mb.frame_count = (uint32_t)nstk;
	for (uint64_t i = 0; i < nstk && !rc; i++) {
		uint64_t pc = cr_word(r, b + L->bucket_size + i * r->ps, "a bucket's stack");

		rc = r->failed ? cr_fail_report(r) : stack_frame(r, pc, i > 0, &frames[i]);
	}
	if (!rc && r->failed)
		rc = cr_fail_report(r);
	return rc ? rc : hr_dump_build_memprof(r->model, &mb, frames, r->err);
}

int core_read_memprof(struct core_reader *r)
{
	const struct rt_layout *L = &r->L;
	struct hr_memprof_frame *frames;
	struct list_walk w;
	int rc;

	if (!L->mbuckets || !L->bucket_size || !L->bk_allnext.present || !L->bk_nstk.present ||
	    !L->mr_allocs.present)
		return HR_OK; /* a runtime laid out otherwise: no memory profile */
	frames = malloc(MAX_STACK * sizeof(*frames));
	if (!frames)
		return hr_error_set(r->err, HR_ENOMEM, "out of memory");
	list_walk_begin(&w, "runtime.mbuckets", "bucket", L->bucket_size);
	rc = core_walk_list(r, &w, cr_word(r, L->mbuckets, "runtime.mbuckets"), &L->bk_allnext,
			    "bucket.allnext", visit_bucket, frames);
	free(frames);
	return rc;
}
