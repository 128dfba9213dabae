/* SPDX-License-Identifier: Apache-2.0 */
/*
 * goroutine_leaks.c - leaked goroutines by the runtime's definition (leaks.h): the
 * fixpoint of the runtime's leak-finding GC (runtime/mgc.go: findGoroutineLeaks,
 * isMaybeRunnable, setSyncObjectsUntraceable) over the model's object graph.
 *
 * What each blocked goroutine waits on is read from the runtime's own structures in the
 * heap, by the binary's DWARF: its g's `waiting` list of sudogs, each with the channel
 * (`c`) or the semaphore's address (`elem`); from Go 1.27 both are maybeTraceablePtr,
 * a pointer word (`vp`) and the address (`vu`). Go 1.25 and older put no sudog of a
 * semaphore wait on that list: the sudog is found in the semaphore table
 * (runtime.semtable, a treap per bucket, a list per address), where it names its g.
 *
 * The marking is the GC's: every pointer word of a reached object (the model's bitmaps),
 * except the words from blocked goroutines' sudogs to their channel or semaphore. Its
 * work list is an explicit array: a deep heap does not recurse.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heapref/leaks.h"

/* How a goroutine waits, by its wait reason (runtime2.go's waitReason ranges). */
enum wait_kind {
	WAIT_OTHER,   /* may run: not blocked, or on something the runtime does not judge */
	WAIT_NEVER,   /* nil channel, empty select: never runnable */
	WAIT_CHAN,    /* channel operation or select: any of its sudogs' channels */
	WAIT_SYNC,    /* Mutex, RWMutex, WaitGroup, Cond: its first sudog's semaphore */
};

#define G_WAITING 4
#define G_LEAKED 10       /* a leak profile already ran: judged afresh, as the runtime does */
#define MAX_SUDOGS 4096   /* a select's cases, bounded: a hostile list cannot loop */
#define MAX_TREAP 1000000 /* semaphore table nodes walked, bounded likewise */

/* Where the runtime keeps what this needs; offsets in bytes. */
struct layout {
	bool ok;
	uint64_t g_waiting, g_stack_lo, g_stack_hi;
	uint64_t sg_g, sg_next, sg_prev, sg_waitlink;
	uint64_t sg_elem, sg_elem_ptr; /* where elem's address is read; its pointer word */
	uint64_t sg_c, sg_c_ptr;
	uint64_t semtable, sem_stride, sem_count, root_treap; /* Go <= 1.25; semtable 0 if none */
};

struct sem_waiter;

struct wait {
	uint64_t sudog;
	uint64_t target; /* the channel or the semaphore's address */
};

struct finder {
	const struct hr_dump *d;
	const struct hr_image *img;
	uint32_t ps;
	struct layout L;
	bool for_retained;     /* keep the marking for hr_goroutine_leaks_retained() */
	uint64_t *marked;      /* a bit per object */
	uint64_t *skip_obj;    /* a bit per object: a sudog whose target word is not followed */
	uint64_t *skip_words;  /* those words' addresses, sorted */
	size_t nskip, skip_cap;
	uint32_t *stack;       /* objects marked, their words not yet followed */
	size_t nstack, stack_cap;
	uint64_t *bits;        /* one object's pointer bits */
	size_t bits_cap;
	struct wait *waits;    /* every blocked goroutine's, by goroutine: */
	size_t nwaits, waits_cap;
	uint32_t *first_wait, *nwait; /* per goroutine */
	uint8_t *kind;         /* enum wait_kind per goroutine */
	struct sem_waiter *sem; /* Go <= 1.25: the semaphore table's sudogs, by goroutine */
	size_t nsem, sem_cap;
	bool sem_read;
	struct hr_goroutine_leaks *out;
};

const char *hr_leak_verdict_name(enum hr_leak_verdict v)
{
	return v == HR_LEAK_YES ? "yes" : v == HR_LEAK_NO ? "no" : "unknown";
}

/* --- reading the snapshot's memory ------------------------------------------------------ */

/* The word at addr: in a heap object or the data or bss segment. */
static bool read_word(const struct finder *f, uint64_t addr, uint64_t *out)
{
	const struct hr_segment *segs[2] = { hr_dump_data(f->d), hr_dump_bss(f->d) };
	uint64_t start, size;
	int64_t i = hr_dump_object_span_at(f->d, addr, &start, &size);

	if (i >= 0) {
		if (size < f->ps || addr - start > size - f->ps)
			return false;
		*out = hr_dump_word(f->d, hr_dump_object(f->d, (size_t)i).data + (addr - start));
		return true;
	}
	for (int k = 0; k < 2; k++) {
		const struct hr_segment *s = segs[k];

		if (s->present && addr >= s->addr && s->contents.len >= f->ps &&
		    addr - s->addr <= s->contents.len - f->ps) {
			*out = hr_dump_word(f->d, s->contents.ptr + (addr - s->addr));
			return true;
		}
	}
	return false;
}

static uint64_t word_or_zero(const struct finder *f, uint64_t addr)
{
	uint64_t v = 0;

	return read_word(f, addr, &v) ? v : 0;
}

/* --- the runtime's layout ----------------------------------------------------------------- */

/* Offset and size of the member at path ("stack.lo") in struct type id. */
static bool member_path(const struct hr_binary *bin, uint32_t id, const char *path,
			uint64_t *off, uint64_t *size)
{
	char step[64];

	*off = 0;
	for (const char *p = path; *p;) {
		size_t len = strcspn(p, ".");
		const struct hr_member *m;

		if (len >= sizeof(step))
			return false;
		memcpy(step, p, len);
		step[len] = '\0';
		if (!(m = hr_binary_find_member(bin, hr_binary_resolve_typedef(bin, id), step)))
			return false;
		*off += m->offset;
		id = m->type;
		p += len + (p[len] == '.');
	}
	*size = hr_binary_type(bin, hr_binary_resolve_typedef(bin, id))->size;
	return true;
}

/* A sudog's elem or c: a pointer (Go <= 1.26), or a maybeTraceablePtr (vp, vu). */
static bool traceable_member(const struct hr_binary *bin, uint32_t sudog, const char *name,
			     uint32_t ps, uint64_t *addr_off, uint64_t *ptr_off)
{
	char path[64];
	uint64_t off, size, vp, vu, sz;

	if (!member_path(bin, sudog, name, &off, &size))
		return false;
	if (size == ps) {
		*addr_off = *ptr_off = off;
		return true;
	}
	snprintf(path, sizeof(path), "%s.vp", name);
	if (!member_path(bin, sudog, path, &vp, &sz)) /* c embeds a maybeTraceablePtr */
		snprintf(path, sizeof(path), "%s.maybeTraceablePtr.vp", name);
	if (!member_path(bin, sudog, path, &vp, &sz))
		return false;
	memcpy(path + strlen(path) - 2, "vu", 2);
	if (!member_path(bin, sudog, path, &vu, &sz))
		return false;
	*ptr_off = vp;
	*addr_off = vu;
	return true;
}

/* Go <= 1.25: runtime.semtable, an array of {root semaRoot; pad}. */
static void semtable_layout(struct finder *f, const struct hr_binary *bin)
{
	const struct hr_global *g = hr_binary_find_global(bin, "runtime.semtable");
	const struct hr_type *arr = g ? hr_binary_type(bin, hr_binary_resolve_typedef(bin, g->type)) : NULL;
	struct layout *L = &f->L;
	uint64_t root, treap, size;

	if (!arr || arr->shape != HR_SHAPE_ARRAY || !arr->count ||
	    !member_path(bin, arr->elem, "root", &root, &size) ||
	    !member_path(bin, arr->elem, "root.treap", &treap, &size))
		return;
	L->semtable = hr_image_runtime(f->img, g->addr);
	L->sem_count = arr->count;
	L->sem_stride = hr_binary_type(bin, hr_binary_resolve_typedef(bin, arr->elem))->size;
	L->root_treap = treap;
}

static void load_layout(struct finder *f)
{
	const struct hr_binary *bin = f->img ? f->img->bin : NULL;
	uint32_t g = bin ? hr_binary_find_type(bin, "runtime.g") : 0;
	uint32_t sg = bin ? hr_binary_find_type(bin, "runtime.sudog") : 0;
	struct layout *L = &f->L;
	uint64_t size;

	if (!g || !sg)
		return;
	L->ok = member_path(bin, g, "waiting", &L->g_waiting, &size) &&
		member_path(bin, g, "stack.lo", &L->g_stack_lo, &size) &&
		member_path(bin, g, "stack.hi", &L->g_stack_hi, &size) &&
		member_path(bin, sg, "g", &L->sg_g, &size) &&
		member_path(bin, sg, "next", &L->sg_next, &size) &&
		member_path(bin, sg, "prev", &L->sg_prev, &size) &&
		member_path(bin, sg, "waitlink", &L->sg_waitlink, &size) &&
		traceable_member(bin, sg, "elem", f->ps, &L->sg_elem, &L->sg_elem_ptr) &&
		traceable_member(bin, sg, "c", f->ps, &L->sg_c, &L->sg_c_ptr);
	if (L->ok)
		semtable_layout(f, bin);
}

/* --- what each goroutine waits on ----------------------------------------------------------- */

static bool reason_is(const struct hr_goroutine *g, const char *s)
{
	size_t n = strlen(s);

	return g->wait_reason.len == n && !memcmp(g->wait_reason.ptr, s, n);
}

/* Whether one of g's frames runs a function whose name starts with prefix. */
static bool in_function(const struct finder *f, const struct hr_goroutine *g, const char *prefix)
{
	size_t nf, n = strlen(prefix);
	const struct hr_frame *fr = hr_dump_frames(f->d, &nf);

	for (uint32_t k = 0; k < g->frame_count && g->first_frame + k < nf; k++) {
		const struct hr_bytes *name = &fr[g->first_frame + k].func_name;

		if (name->len >= n && !memcmp(name->ptr, prefix, n))
			return true;
	}
	return false;
}

static enum wait_kind wait_kind_of(const struct finder *f, const struct hr_goroutine *g)
{
	static const char *const never[] = { "chan receive (nil chan)", "chan send (nil chan)",
					     "select (no cases)" };
	static const char *const chan[] = { "chan receive", "chan send", "select" };
	static const char *const sync[] = { "sync.Cond.Wait", "sync.Mutex.Lock",
					    "sync.RWMutex.RLock", "sync.RWMutex.Lock",
					    "sync.WaitGroup.Wait" };

	if (g->status != G_WAITING && g->status != G_LEAKED)
		return WAIT_OTHER;
	for (size_t k = 0; k < sizeof(never) / sizeof(never[0]); k++)
		if (reason_is(g, never[k]))
			return WAIT_NEVER;
	for (size_t k = 0; k < sizeof(chan) / sizeof(chan[0]); k++)
		if (reason_is(g, chan[k]))
			return WAIT_CHAN;
	for (size_t k = 0; k < sizeof(sync) / sizeof(sync[0]); k++)
		if (reason_is(g, sync[k]))
			return WAIT_SYNC;
	/* Go 1.19 and 1.20 said "semacquire" for a sync.Mutex or WaitGroup too */
	if (reason_is(g, "semacquire") && in_function(f, g, "sync.runtime_Semacquire"))
		return WAIT_SYNC;
	return WAIT_OTHER;
}

static int add_wait(struct finder *f, uint64_t sudog, uint64_t target)
{
	struct wait *w = hr_array_push((void **)&f->waits, &f->nwaits, &f->waits_cap, sizeof(*w));

	if (!w)
		return HR_ENOMEM;
	*w = (struct wait){ sudog, target };
	return HR_OK;
}

/*
 * The sudogs on g's waiting list, each with its channel (chan) or semaphore (sync). A
 * sudog is a heap object on one goroutine's list: all the lists together are no longer
 * than the heap has objects, which bounds what a damaged snapshot can make this read.
 */
static int read_waiting_list(struct finder *f, const struct hr_goroutine *g, bool chan)
{
	uint64_t sg = word_or_zero(f, g->addr + f->L.g_waiting);
	size_t most = hr_dump_object_count(f->d);
	int rc = HR_OK;

	for (unsigned n = 0; sg && n < MAX_SUDOGS && f->nwaits < most && !rc; n++) {
		uint64_t target = word_or_zero(f, sg + (chan ? f->L.sg_c : f->L.sg_elem));

		rc = add_wait(f, sg, target);
		sg = word_or_zero(f, sg + f->L.sg_waitlink);
	}
	return rc;
}

/* A sudog of the semaphore table: the goroutine it queues and where it waits. */
struct sem_waiter {
	uint64_t g, sudog, elem;
};

static int cmp_waiter(const void *a, const void *b)
{
	const struct sem_waiter *x = a, *y = b;

	return (x->g > y->g) - (x->g < y->g);
}

/*
 * Go <= 1.25: every sudog of the semaphore table, sorted by goroutine, read once. The
 * table: per bucket a treap of sudogs (prev, next), one per address, each the head of
 * the list (waitlink) of the goroutines waiting on that address. Walks are bounded: a
 * hostile table cannot loop.
 */
static int read_semtable(struct finder *f)
{
	const struct layout *L = &f->L;
	uint64_t todo[64];
	size_t walked = 0;

	for (uint64_t b = 0; b < L->sem_count && walked < MAX_TREAP; b++) {
		size_t n = 0;

		todo[n++] = word_or_zero(f, L->semtable + b * L->sem_stride + L->root_treap);
		while (n && walked < MAX_TREAP) {
			uint64_t node = todo[--n];

			for (uint64_t s = node; s && walked < MAX_TREAP;
			     s = word_or_zero(f, s + L->sg_waitlink), walked++) {
				struct sem_waiter *w = hr_array_push((void **)&f->sem, &f->nsem,
								     &f->sem_cap, sizeof(*w));

				if (!w)
					return HR_ENOMEM;
				*w = (struct sem_waiter){ word_or_zero(f, s + L->sg_g), s,
							  word_or_zero(f, s + L->sg_elem) };
			}
			if (node && n + 2 <= sizeof(todo) / sizeof(todo[0])) { /* a treap is shallow */
				todo[n++] = word_or_zero(f, node + L->sg_prev);
				todo[n++] = word_or_zero(f, node + L->sg_next);
			}
		}
	}
	if (f->nsem)
		qsort(f->sem, f->nsem, sizeof(*f->sem), cmp_waiter);
	f->sem_read = true;
	return HR_OK;
}

/* Go <= 1.25: goroutine g_addr's sudog in the semaphore table, into the waits (*found). */
static int find_in_semtable(struct finder *f, uint64_t g_addr, bool *found)
{
	struct sem_waiter key = { .g = g_addr }, *w;
	int rc = f->sem_read ? HR_OK : read_semtable(f);

	*found = false;
	if (rc || !f->nsem || !(w = bsearch(&key, f->sem, f->nsem, sizeof(key), cmp_waiter)))
		return rc;
	*found = true;
	return add_wait(f, w->sudog, w->elem);
}

/* Reads what goroutine i waits on; sets its verdict unknown where the snapshot cannot say. */
static int read_wait(struct finder *f, size_t i, const struct hr_goroutine *g)
{
	int rc;

	f->first_wait[i] = (uint32_t)f->nwaits;
	if (f->kind[i] == WAIT_OTHER || f->kind[i] == WAIT_NEVER)
		return HR_OK;
	if (!f->L.ok) {
		f->out->verdict[i] = HR_LEAK_UNKNOWN;
		f->out->why[i] = "nothing describes the runtime's g and sudog (no binary, or "
				 "one without DWARF)";
		return HR_OK;
	}
	if ((rc = read_waiting_list(f, g, f->kind[i] == WAIT_CHAN)))
		return rc;
	if (f->kind[i] == WAIT_SYNC && f->nwaits == f->first_wait[i]) {
		bool found = false;

		if (f->L.semtable && (rc = find_in_semtable(f, g->addr, &found)))
			return rc;
		if (!found) {
			f->out->verdict[i] = HR_LEAK_UNKNOWN;
			f->out->why[i] = "no queue entry of the runtime's names the goroutine (a "
					 "sync.Cond's waiter, before Go 1.26)";
		}
	}
	f->nwait[i] = (uint32_t)(f->nwaits - f->first_wait[i]);
	return HR_OK;
}

/* --- marking ------------------------------------------------------------------------------ */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* The words from blocked goroutines' sudogs to what they wait on: not followed. */
static int untraceable_words(struct finder *f)
{
	for (size_t i = 0; i < f->out->count; i++) {
		bool chan = f->kind[i] == WAIT_CHAN;

		if (f->kind[i] != WAIT_CHAN && f->kind[i] != WAIT_SYNC)
			continue;
		for (uint32_t k = 0; k < f->nwait[i]; k++) {
			uint64_t sg = f->waits[f->first_wait[i] + k].sudog;
			int64_t obj = hr_dump_object_at(f->d, sg);
			uint64_t *w = hr_array_push((void **)&f->skip_words, &f->nskip, &f->skip_cap,
						    sizeof(*w));

			if (!w)
				return HR_ENOMEM;
			*w = sg + (chan ? f->L.sg_c_ptr : f->L.sg_elem_ptr);
			if (obj >= 0)
				hr_bit_set(f->skip_obj, (uint64_t)obj);
		}
	}
	if (f->nskip)
		qsort(f->skip_words, f->nskip, sizeof(*f->skip_words), cmp_u64);
	return HR_OK;
}

static bool skipped(const struct finder *f, uint64_t addr)
{
	/* (bsearch() of NULL, even of nothing, is undefined) */
	return f->nskip && bsearch(&addr, f->skip_words, f->nskip, sizeof(addr), cmp_u64);
}

/* Marks what value points into; its words are followed by drain(). */
static int mark(struct finder *f, uint64_t value)
{
	int64_t i = hr_dump_object_at(f->d, value);
	uint32_t *slot;

	if (i < 0 || hr_bit_get(f->marked, (uint64_t)i))
		return HR_OK;
	hr_bit_set(f->marked, (uint64_t)i);
	slot = hr_array_push((void **)&f->stack, &f->nstack, &f->stack_cap, sizeof(*slot));
	if (!slot)
		return HR_ENOMEM;
	*slot = (uint32_t)i;
	return HR_OK;
}

/* Follows the pointer words of object i (all but untraceable ones), marking what they reach. */
static int scan_object(struct finder *f, size_t i)
{
	struct hr_object o = hr_dump_object(f->d, i);
	uint64_t nwords = o.size / f->ps;
	bool sudog = hr_bit_get(f->skip_obj, i);
	int rc = HR_OK;

	if (hr_array_reserve((void **)&f->bits, &f->bits_cap, hr_bit_words(nwords) + 1,
			     sizeof(uint64_t)))
		return HR_ENOMEM;
	hr_dump_object_ptr_bits(f->d, i, f->bits);
	for (uint64_t w = hr_bit_next(f->bits, 0, nwords); w < nwords && !rc;
	     w = hr_bit_next(f->bits, w + 1, nwords)) {
		if (sudog && skipped(f, o.addr + w * f->ps))
			continue;
		rc = mark(f, hr_dump_word(f->d, o.data + w * f->ps));
	}
	return rc;
}

static int drain(struct finder *f)
{
	int rc = HR_OK;

	while (f->nstack && !rc)
		rc = scan_object(f, f->stack[--f->nstack]);
	return rc;
}

static int mark_segment(struct finder *f, const struct hr_segment *s)
{
	uint64_t words = s->present ? s->contents.len / f->ps : 0;
	int rc = HR_OK;

	for (uint64_t w = hr_bit_next(s->ptr_bits, 0, words); w < words && !rc;
	     w = hr_bit_next(s->ptr_bits, w + 1, words))
		rc = mark(f, hr_dump_word(f->d, s->contents.ptr + w * f->ps));
	return rc;
}

/* The globals, finalizers and other roots: what the GC marks before any stack. */
static int mark_static_roots(struct finder *f)
{
	size_t n;
	const struct hr_finalizer *fin = hr_dump_finalizers(f->d, &n);
	const struct hr_other_root *other;
	const struct hr_root_pointer *rp;
	int rc = mark_segment(f, hr_dump_data(f->d));

	if (!rc)
		rc = mark_segment(f, hr_dump_bss(f->d));
	for (size_t i = 0; i < n && !rc; i++) { /* the object's referents, not the object */
		int64_t obj = hr_dump_object_at(f->d, fin[i].obj);

		rc = mark(f, fin[i].fn);
		if (!rc && obj >= 0)
			rc = scan_object(f, (size_t)obj);
	}
	fin = hr_dump_queued_finalizers(f->d, &n);
	for (size_t i = 0; i < n && !rc; i++)
		rc = mark(f, fin[i].obj) ? HR_ENOMEM : mark(f, fin[i].fn);
	other = hr_dump_other_roots(f->d, &n);
	for (size_t i = 0; i < n && !rc; i++)
		rc = mark(f, other[i].ptr);
	rp = hr_dump_root_pointers(f->d, &n);
	for (size_t i = 0; i < n && !rc && rp[i].frame == HR_NO_FRAME; i++)
		rc = mark(f, rp[i].ptr);
	return rc;
}

/* The pointer words of goroutine i's frames (a layout's stack root pointers too). */
static int mark_stack(struct finder *f, size_t i)
{
	size_t nf, n;
	const struct hr_goroutine *g = &hr_dump_goroutines(f->d, &n)[i];
	const struct hr_frame *fr = hr_dump_frames(f->d, &nf);
	const struct hr_root_pointer *rp = hr_dump_root_pointers(f->d, &n);
	int rc = HR_OK;

	for (uint32_t k = 0; k < g->frame_count && !rc; k++) {
		const struct hr_frame *fk = &fr[g->first_frame + k];

		for (uint64_t w = 0; w < fk->contents.len / f->ps && !rc; w++)
			if (hr_dump_frame_ptr_bit(f->d, fk, w))
				rc = mark(f, hr_dump_word(f->d, fk->contents.ptr + w * f->ps));
	}
	for (size_t k = 0; k < n && !rc; k++)
		if (rp[k].frame != HR_NO_FRAME && rp[k].frame < nf && fr[rp[k].frame].goroutine == i)
			rc = mark(f, rp[k].ptr);
	return rc;
}

/* --- the fixpoint ------------------------------------------------------------------------------ */

/* Whether target is marked or outside the heap (the runtime's isMarkedOrNotInHeap). */
static bool reached(const struct finder *f, uint64_t target)
{
	int64_t i = hr_dump_object_at(f->d, target);

	return i < 0 || hr_bit_get(f->marked, (uint64_t)i);
}

/* The runtime's isMaybeRunnable, for a blocked goroutine i. */
static bool maybe_runnable(const struct finder *f, size_t i)
{
	/* no waits read at all: f->waits is NULL, and NULL + 0 is undefined */
	const struct wait *w = f->nwait[i] ? f->waits + f->first_wait[i] : NULL;

	switch (f->kind[i]) {
	case WAIT_NEVER:
		return false;
	case WAIT_CHAN:
		for (uint32_t k = 0; k < f->nwait[i]; k++)
			if (reached(f, w[k].target))
				return true;
		return false;
	case WAIT_SYNC: /* its first sudog's semaphore; none: runnable */
		return !f->nwait[i] || reached(f, w[0].target);
	default:
		return true;
	}
}

/*
 * Wakes the blocked goroutines (indexes in waiting[0..*n)) whose wait got marked: their
 * stacks are marked from now on, and they leave the list. *woke: whether any did.
 */
static int wake(struct finder *f, bool *blocked, uint32_t *waiting, size_t *n, bool *woke)
{
	size_t kept = 0;
	int rc = HR_OK;

	*woke = false;
	for (size_t k = 0; k < *n; k++) {
		uint32_t i = waiting[k];

		if (rc || !maybe_runnable(f, i)) {
			waiting[kept++] = i;
			continue;
		}
		blocked[i] = false;
		*woke = true;
		rc = mark_stack(f, i);
	}
	*n = kept;
	return rc;
}

/*
 * Marks from the roots and the runnable goroutines' stacks until no blocked one wakes.
 * The blocked ones are looked at again every so many objects marked: once all have
 * woken, nothing can be leaked and the rest of the heap need not be marked (a healthy
 * heap's goroutines wait on what the globals reach: found at once).
 */
static int fixpoint(struct finder *f, bool *blocked)
{
	size_t n = f->out->count, nwaiting = 0;
	uint32_t *waiting = malloc((n + 1) * sizeof(*waiting));
	/* a look at the blocked ones costs about as much as marking this many objects */
	size_t slice = n * 4 > 65536 ? n * 4 : 65536;
	bool woke;
	int rc = waiting ? mark_static_roots(f) : HR_ENOMEM;

	for (size_t i = 0; i < n && !rc; i++) {
		if (blocked[i])
			waiting[nwaiting++] = (uint32_t)i;
		else
			rc = mark_stack(f, i);
	}
	while (!rc && nwaiting) {
		if ((rc = wake(f, blocked, waiting, &nwaiting, &woke)))
			break;
		f->out->rounds += woke;
		if (!f->nstack && !woke)
			break; /* nothing left to mark, nobody woke: the rest are leaked */
		for (size_t k = 0; k < slice && f->nstack && !rc; k++)
			rc = scan_object(f, f->stack[--f->nstack]);
	}
	free(waiting);
	return rc;
}

/*
 * Once the verdicts are known and some goroutines are still blocked: what the heap holds
 * without their stacks, kept for hr_goroutine_leaks_retained(). The words from their
 * sudogs to what they wait on are followed now (the runtime shades those too), so the
 * marking is what the roots and the other stacks reach.
 */
static int keep_marking(struct finder *f, const bool *blocked)
{
	struct hr_goroutine_leaks *l = f->out;
	int rc = HR_OK;

	bool any = false;

	for (size_t i = 0; i < l->count; i++)
		any |= blocked[i];
	if (!any)
		return HR_OK; /* the marking may have stopped early: nobody needs it */
	if (!(l->stack_marked = calloc(l->count + 1, 1)))
		return HR_ENOMEM;
	for (size_t i = 0; i < l->count && !rc; i++) {
		l->stack_marked[i] = !blocked[i];
		for (uint32_t k = 0; blocked[i] && k < f->nwait[i] && !rc; k++)
			rc = mark(f, f->waits[f->first_wait[i] + k].target);
	}
	if (!rc)
		rc = drain(f);
	if (!rc) { /* the marking is the verdicts' now */
		l->marked = f->marked;
		f->marked = NULL;
	}
	return rc;
}

/* Whether a goroutine that may run was read only in part (a core caught it running). */
static bool partly_read(const struct hr_goroutine *g, size_t n, const bool *blocked)
{
	for (size_t i = 0; i < n; i++)
		if (!blocked[i] && g[i].partial_stack)
			return true;
	return false;
}

/*
 * What such a goroutine's unread frames hold could reach what a goroutine found leaked
 * waits on: its verdict is a guess, and says so.
 */
static void doubt_leaks(struct hr_goroutine_leaks *l)
{
	for (size_t i = 0; i < l->count; i++) {
		if (l->verdict[i] != HR_LEAK_YES)
			continue;
		l->verdict[i] = HR_LEAK_UNKNOWN;
		l->why[i] = "a goroutine running when the core was taken is read only in part "
			    "(caught between safe points): its unread frames could reach what "
			    "this one waits on";
		l->leaked--;
	}
}

static int find(struct finder *f)
{
	size_t n = f->out->count;
	const struct hr_goroutine *g = hr_dump_goroutines(f->d, &n);
	bool *blocked = calloc(n + 1, sizeof(*blocked));
	int rc = blocked ? HR_OK : HR_ENOMEM;

	for (size_t i = 0; i < n && !rc; i++) {
		f->kind[i] = (uint8_t)wait_kind_of(f, &g[i]);
		if (f->L.ok) {
			uint64_t lo = word_or_zero(f, g[i].addr + f->L.g_stack_lo);
			uint64_t hi = word_or_zero(f, g[i].addr + f->L.g_stack_hi);

			f->out->stack_bytes[i] = hi > lo ? hi - lo : 0;
		}
		rc = read_wait(f, i, &g[i]);
		/* an unknown verdict's goroutine is taken as one that may run: nothing is
		 * made to look leaked because of it */
		blocked[i] = f->kind[i] != WAIT_OTHER && f->out->verdict[i] != HR_LEAK_UNKNOWN;
	}
	if (!rc)
		rc = untraceable_words(f);
	if (!rc)
		rc = fixpoint(f, blocked);
	for (size_t i = 0; i < n && !rc; i++) {
		if (!blocked[i])
			continue;
		/* the main goroutine in select {} is not reported (runtime/mgc.go) */
		if (g[i].goid == 1 && reason_is(&g[i], "select (no cases)"))
			continue;
		f->out->verdict[i] = HR_LEAK_YES;
		f->out->leaked++;
	}
	if (f->out->leaked && partly_read(g, n, blocked))
		doubt_leaks(f->out);
	for (size_t i = 0; i < n; i++)
		f->out->unknown += f->out->verdict[i] == HR_LEAK_UNKNOWN;
	if (!rc && f->for_retained)
		rc = keep_marking(f, blocked);
	free(blocked);
	return rc;
}

/* --- lifecycle ---------------------------------------------------------------------------------- */

static struct hr_goroutine_leaks *leaks_new(size_t n)
{
	struct hr_goroutine_leaks *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->count = n;
	l->verdict = calloc(n + 1, sizeof(*l->verdict));
	l->why = calloc(n + 1, sizeof(*l->why));
	l->stack_bytes = calloc(n + 1, sizeof(*l->stack_bytes));
	if (!l->verdict || !l->why || !l->stack_bytes) {
		hr_goroutine_leaks_free(l);
		return NULL;
	}
	return l;
}

static void finder_release(struct finder *f)
{
	free(f->marked);
	free(f->skip_obj);
	free(f->skip_words);
	free(f->stack);
	free(f->bits);
	free(f->waits);
	free(f->first_wait);
	free(f->nwait);
	free(f->kind);
	free(f->sem);
}

struct hr_goroutine_leaks *hr_goroutine_leaks_find(const struct hr_dump *model,
						   const struct hr_image *img, bool for_retained,
						   struct hr_error *err)
{
	size_t n, nobj = hr_dump_object_count(model);
	struct finder f = { .d = model, .img = img, .ps = hr_dump_params(model)->ptr_size,
			    .for_retained = for_retained };
	int rc = HR_ENOMEM;

	hr_dump_goroutines(model, &n);
	if (!(f.out = leaks_new(n)))
		goto out;
	f.marked = calloc(hr_bit_words(nobj) + 1, sizeof(uint64_t));
	f.skip_obj = calloc(hr_bit_words(nobj) + 1, sizeof(uint64_t));
	f.first_wait = calloc(n + 1, sizeof(*f.first_wait));
	f.nwait = calloc(n + 1, sizeof(*f.nwait));
	f.kind = calloc(n + 1, sizeof(*f.kind));
	if (!f.marked || !f.skip_obj || !f.first_wait || !f.nwait || !f.kind)
		goto out;
	load_layout(&f);
	rc = find(&f);
out:
	finder_release(&f);
	if (rc) {
		hr_goroutine_leaks_free(f.out);
		hr_error_set(err, HR_ENOMEM, "out of memory finding leaked goroutines");
		return NULL;
	}
	return f.out;
}

/* --- what a set of goroutines alone keeps alive --------------------------------------------- */

/*
 * Into f->marked: the leak finder's marking (what the heap holds without the blocked
 * goroutines' stacks) and what the stacks of the blocked goroutines not in group
 * `without` reach (UINT32_MAX: of all of them).
 */
static int mark_with_blocked(struct finder *f, const struct hr_goroutine_leaks *l,
			     const uint32_t *group_of, uint32_t without)
{
	size_t words = hr_bit_words(hr_dump_object_count(f->d)) + 1;
	int rc = HR_OK;

	if (!f->marked && !(f->marked = malloc(words * sizeof(uint64_t))))
		return HR_ENOMEM;
	if (!f->skip_obj && !(f->skip_obj = calloc(words, sizeof(uint64_t))))
		return HR_ENOMEM;
	memcpy(f->marked, l->marked, words * sizeof(uint64_t));
	for (size_t i = 0; i < l->count && !rc; i++)
		if (!l->stack_marked[i] && group_of[i] != without)
			rc = mark_stack(f, i);
	return rc ? rc : drain(f);
}

int hr_goroutine_leaks_retained(const struct hr_goroutine_leaks *leaks,
				const struct hr_dump *model, const uint32_t *group_of,
				size_t ngroups, const bool *wanted, uint64_t *bytes,
				uint64_t *objects, struct hr_error *err)
{
	uint32_t ps = hr_dump_params(model)->ptr_size;
	struct finder all = { .d = model, .ps = ps }, without = { .d = model, .ps = ps };
	size_t words = hr_bit_words(hr_dump_object_count(model));
	int rc = HR_OK;

	memset(bytes, 0, ngroups * sizeof(*bytes));
	memset(objects, 0, ngroups * sizeof(*objects));
	if (!leaks->marked) /* nobody blocked: nobody retains anything alone */
		return HR_OK;
	rc = mark_with_blocked(&all, leaks, group_of, UINT32_MAX);
	for (size_t k = 0; k < ngroups && !rc; k++) {
		if (!wanted[k] || (rc = mark_with_blocked(&without, leaks, group_of, (uint32_t)k)))
			continue;
		for (size_t w = 0; w < words; w++) {
			uint64_t only = all.marked[w] & ~without.marked[w];

			for (; only; only &= only - 1) {
				bytes[k] += hr_dump_object(model, w * 64 + (size_t)__builtin_ctzll(only)).size;
				objects[k]++;
			}
		}
	}
	finder_release(&all);
	finder_release(&without);
	return rc ? hr_error_set(err, HR_ENOMEM, "out of memory finding what goroutines retain")
		  : HR_OK;
}

void hr_goroutine_leaks_free(struct hr_goroutine_leaks *l)
{
	if (!l)
		return;
	free(l->verdict);
	free(l->why);
	free(l->stack_bytes);
	free(l->marked);
	free(l->stack_marked);
	free(l);
}
