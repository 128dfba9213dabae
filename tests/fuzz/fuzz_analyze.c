/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_analyze.c - fuzz target: the whole of `heapref analyze --force` on any dump, with
 * one fixed binary: the dump read and indexed, then the analysis (analysis.h: the
 * pairing check, the scanner's two passes, the result, the dominator tree, examples,
 * the view by dominator) and the writers (to /dev/null).
 *
 * The binary is named by the environment variable HEAPREF_FUZZ_BINARY and opened once,
 * at start-up (tests/fuzz/README.md says which one: the seed dumps come from it); it is
 * never changed by an analysis, so every input sees the same one.
 *
 * On a dump the reader accepts, the analysis must finish, reach exactly the objects the
 * dump's pointer bitmaps reach from its roots (computed here independently), and charge
 * each once: the tree holds what the passes reached.
 */
#include <string.h>

#include "heapref/analysis.h"
#include "heapref/binary.h"
#include "fuzz_target.h"
#include "heapref/chains.h"
#include "heapref/dominators.h"
#include "heapref/dump.h"
#include "heapref/scan.h"
#include "heapref/writers.h"

#define NAME "fuzz.hdump"
#define MAX_DEPTH 256 /* the CLI's default */

/* Opened once by LLVMFuzzerInitialize(), shared by every input; never freed. */
static struct hr_binary *fixed_binary;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fixed_binary = fuzz_fixed_binary("fuzz_analyze");
	return 0;
}

/*
 * Reachability by the bitmaps alone, from the dump's roots: what the analysis must
 * reach, however it names it (scan.h: the typed pass only decides names). Written from
 * the roots' definition in docs/analysis.md and tests/e2e/reach.py, not from the
 * scanner: data, bss and frame words with their pointer bit, finalizers' functions and
 * the pointer words of their objects (not the objects themselves), queued finalizers'
 * objects and functions, other roots.
 */
struct reach {
	const struct hr_dump *dump;
	uint64_t *seen;
	uint32_t *stack;
	size_t n;
	uint64_t objects, bytes;
};

static void reach_value(struct reach *r, uint64_t value)
{
	int64_t i = hr_dump_object_at(r->dump, value);

	if (i < 0 || hr_bit_get(r->seen, (uint64_t)i))
		return;
	hr_bit_set(r->seen, (uint64_t)i);
	r->stack[r->n++] = (uint32_t)i; /* each object once: the stack holds them all */
	r->objects++;
	r->bytes += hr_dump_object(r->dump, (size_t)i).size;
}

/* Every pointer word of object i. */
static void reach_from_object(struct reach *r, size_t i)
{
	struct hr_object o = hr_dump_object(r->dump, i);
	uint32_t ps = hr_dump_params(r->dump)->ptr_size;

	for (uint64_t off = 0; off + ps <= o.size; off += ps)
		if (hr_dump_heap_ptr_bit(r->dump, o.addr + off))
			reach_value(r, hr_dump_word(r->dump, o.data + off));
}

static void reach_roots(struct reach *r)
{
	const struct hr_dump *d = r->dump;
	const struct hr_segment *segs[2] = { hr_dump_data(d), hr_dump_bss(d) };
	uint32_t ps = hr_dump_params(d)->ptr_size;
	size_t n;

	for (int k = 0; k < 2; k++)
		for (uint64_t w = 0; segs[k]->present && w < segs[k]->contents.len / ps; w++)
			if (hr_bit_get(segs[k]->ptr_bits, w))
				reach_value(r, hr_dump_word(d, segs[k]->contents.ptr + w * ps));
	const struct hr_frame *f = hr_dump_frames(d, &n);
	for (size_t i = 0; i < n; i++)
		for (uint64_t w = 0; w < f[i].contents.len / ps; w++)
			if (hr_dump_frame_ptr_bit(d, &f[i], w))
				reach_value(r, hr_dump_word(d, f[i].contents.ptr + w * ps));
	const struct hr_finalizer *fin = hr_dump_finalizers(d, &n);
	for (size_t i = 0; i < n; i++) {
		int64_t obj = hr_dump_object_at(d, fin[i].obj);

		reach_value(r, fin[i].fn);
		if (obj >= 0)
			reach_from_object(r, (size_t)obj);
	}
	fin = hr_dump_queued_finalizers(d, &n);
	for (size_t i = 0; i < n; i++) {
		reach_value(r, fin[i].obj);
		reach_value(r, fin[i].fn);
	}
	const struct hr_other_root *other = hr_dump_other_roots(d, &n);
	for (size_t i = 0; i < n; i++)
		reach_value(r, other[i].ptr);
}

static void check_reachable(const struct hr_dump *d, const struct hr_scan_summary *s)
{
	size_t nobj = hr_dump_object_count(d);
	struct reach r = { .dump = d, .seen = calloc(hr_bit_words(nobj) + 1, sizeof(uint64_t)),
			   .stack = malloc((nobj + 1) * sizeof(uint32_t)) };

	FUZZ_CHECK(r.seen && r.stack, "out of memory for %zu objects", nobj);
	reach_roots(&r);
	while (r.n)
		reach_from_object(&r, r.stack[--r.n]);
	FUZZ_CHECK(r.objects == s->typed_objects + s->fallback_objects &&
			   r.bytes == s->typed_bytes + s->fallback_bytes,
		   "the bitmaps reach %llu objects, %llu bytes; the analysis %llu, %llu",
		   (unsigned long long)r.objects, (unsigned long long)r.bytes,
		   (unsigned long long)(s->typed_objects + s->fallback_objects),
		   (unsigned long long)(s->typed_bytes + s->fallback_bytes));
	free(r.seen);
	free(r.stack);
}

/* What the passes reached is in the tree, once, and within the dump. */
static void check_accounting(const struct hr_scan_summary *s, const struct hr_chains *tree)
{
	uint64_t objects, bytes;

	hr_chains_totals(tree, &objects, &bytes);
	FUZZ_CHECK(objects == s->typed_objects + s->fallback_objects &&
			   bytes == s->typed_bytes + s->fallback_bytes,
		   "the tree holds %llu objects, %llu bytes; the passes reached %llu, %llu",
		   (unsigned long long)objects, (unsigned long long)bytes,
		   (unsigned long long)(s->typed_objects + s->fallback_objects),
		   (unsigned long long)(s->typed_bytes + s->fallback_bytes));
	FUZZ_CHECK(objects <= s->total_objects && bytes <= s->total_bytes,
		   "reached %llu objects of %llu", (unsigned long long)objects,
		   (unsigned long long)s->total_objects);
	FUZZ_CHECK(s->unreachable_objects == s->total_objects - objects,
		   "unreachable objects %llu", (unsigned long long)s->unreachable_objects);
}

/* The text report, as analyze --text writes it: elements folded, 1% cutoff. */
static void write_report(FILE *out, const struct hr_chains *tree)
{
	struct hr_error err = { 0 };
	struct hr_chains *folded = hr_chains_fold_elements(tree);

	FUZZ_CHECK(folded, "out of memory folding elements");
	FUZZ_CHECK(hr_write_chain_report(out, folded, 1.0, &err) == 0, "report: %s", err.msg);
	hr_chains_free(folded);
}

/*
 * The dominator tree (heapref retained, --attribution dominator) over what the scan
 * reached: the virtual root retains exactly what the passes reached, the tree by
 * dominator holds it all, and the retained list and why's paths write.
 */
static void check_dominators(const struct hr_analysis *an, FILE *out)
{
	const struct hr_dump *dump = an->model;
	const struct hr_scan_summary *s = hr_result_summary(an->result);
	struct hr_error err = { 0 };
	struct hr_dom_node all = hr_heap_dom_node(an->dominators, 0);
	uint64_t objects, bytes;
	bool found;

	FUZZ_CHECK(all.retained_objects == s->typed_objects + s->fallback_objects &&
			   all.retained_bytes == s->typed_bytes + s->fallback_bytes,
		   "the virtual root retains %llu objects, %llu bytes; the passes reached %llu",
		   (unsigned long long)all.retained_objects, (unsigned long long)all.retained_bytes,
		   (unsigned long long)(s->typed_objects + s->fallback_objects));
	hr_chains_totals(an->view, &objects, &bytes);
	FUZZ_CHECK(objects == all.retained_objects && bytes == all.retained_bytes,
		   "the tree by dominator holds %llu objects", (unsigned long long)objects);
	FUZZ_CHECK(hr_write_retained(out, dump, an->tree, an->result, an->dominators,
				     &(struct hr_retained_options){ .top = 5, .tsv = true },
				     &err) == 0, "retained: %s", err.msg);
	if (hr_dump_object_count(dump)) {
		struct hr_heap_graph *g = hr_heap_graph_new(dump, an->tree, an->result, &err);
		uint64_t addr = hr_dump_object(dump, hr_dump_object_count(dump) / 2).addr;

		FUZZ_CHECK(g, "graph: %s", err.msg);
		FUZZ_CHECK(hr_write_path(out, dump, an->tree, an->result,
					 &(struct hr_path_options){ .paths = 3, .graph = g }, addr,
					 &found, &err) == 0, "why: %s", err.msg);
		hr_heap_graph_free(g);
	}
}

/*
 * The whole analysis as `analyze --force --examples 2 --attribution dominator`,
 * `retained`, `why -n 3`, `goroutines` and `suspects --threshold 0` run it, in one: the
 * paths, the graph, the dominator tree, examples, the view by dominator, the leaked
 * goroutines and the suspects (every root that retains anything).
 */
static void analyze(const struct hr_dump *dump)
{
	const struct hr_analysis_request rq = {
		.max_depth = MAX_DEPTH, .force = true, .paths = true, .graph = true,
		.dominators = true, .examples = 2, .view_wanted = true,
		.view = HR_VIEW_BY_DOMINATOR, .goroutines = true, .leaks = true,
		.suspects = true, .threshold_percent = 0.0,
	};
	struct hr_analysis an;
	struct hr_error err = { 0 };
	FILE *out;

	if (hr_analysis_run(dump, fixed_binary, &rq, &an, &err)) {
		/* a 4-byte or big-endian dump, or a bias the binary cannot take */
		FUZZ_CHECK(err.code == HR_EINPUT, "code %d: %s", err.code, err.msg);
		if (strncmp(err.msg, NAME ": ", strlen(NAME ": ")))
			FUZZ_CHECK_ERROR(&err, HR_EINPUT, hr_binary_path(fixed_binary));
		hr_analysis_release(&an);
		return;
	}
	check_accounting(hr_result_summary(an.result), an.tree);
	check_reachable(dump, hr_result_summary(an.result));
	out = fopen("/dev/null", "wb");
	FUZZ_CHECK(out, "cannot open /dev/null");
	check_dominators(&an, out);
	FUZZ_CHECK(hr_write_pprof(out, an.tree, NULL, &err) == 0, "pprof: %s", err.msg);
	FUZZ_CHECK(hr_write_pprof(out, an.view, NULL, &err) == 0, "pprof: %s", err.msg);
	FUZZ_CHECK(an.leaks && an.leaks->leaked + an.leaks->unknown <= an.leaks->count,
		   "leak verdicts: %zu leaked, %zu unknown of %zu", an.leaks ? an.leaks->leaked : 0,
		   an.leaks ? an.leaks->unknown : 0, an.leaks ? an.leaks->count : 0);
	FUZZ_CHECK(hr_write_goroutines(out, dump, &an.img, an.result, an.leaks, false, &err) == 0,
		   "goroutines: %s", err.msg);
	write_report(out, an.tree);
	for (int f = HR_SUSPECTS_TEXT; f <= HR_SUSPECTS_HTML; f++) {
		struct hr_suspects_options so = { .format = f, .binary = "binary", .dump = "dump",
						  .chains = an.view };

		FUZZ_CHECK(hr_write_suspects(out, an.suspects, &so, &err) == 0, "suspects: %s",
			   err.msg);
	}
	fclose(out);
	hr_analysis_release(&an);
}

#ifdef HEAPREF_LIBFUZZER
/*
 * A mutator that knows the format, for half of libFuzzer's mutations: a pointer word
 * of a heap object, the data or bss segment or a stack frame is made to point at some
 * object, at its start or inside it, or at the object holding the word. Byte-level
 * mutations seldom make a valid heap address; this one makes cycles, shared objects,
 * interior pointers and objects reached through the wrong type, and keeps the dump
 * well-formed. Only libFuzzer builds have it (LLVMFuzzerMutate() is libFuzzer's).
 */
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

static uint64_t next_random(uint64_t *state)
{
	*state = *state * 6364136223846793005u + 1442695040888963407u;
	return *state >> 33;
}

/* A word (pointer-sized, and a pointer if one is found soon) of object i: its offset. */
static uint64_t pick_word(const struct hr_dump *d, struct hr_object o, uint64_t *rng)
{
	uint64_t nwords = o.size / 8, w = next_random(rng) % nwords;

	for (int tries = 0; tries < 16 && !hr_dump_heap_ptr_bit(d, o.addr + w * 8); tries++)
		w = next_random(rng) % nwords;
	return w * 8;
}

/* The file offset of a word to overwrite, and the object (index) it lies in, or -1. */
static int64_t pick_place(const struct hr_dump *d, const uint8_t *data, uint64_t *rng,
			  size_t *at)
{
	size_t n = hr_dump_object_count(d), nf;
	const struct hr_frame *f = hr_dump_frames(d, &nf);
	const struct hr_segment *seg = next_random(rng) % 2 ? hr_dump_data(d) : hr_dump_bss(d);
	uint64_t kind = next_random(rng) % 8;

	if (kind == 0 && seg->present && seg->contents.len >= 8) {
		*at = (size_t)(seg->contents.ptr - data) +
		      (size_t)(next_random(rng) % (seg->contents.len / 8)) * 8;
		return -1;
	}
	if (kind == 1 && nf) {
		const struct hr_frame *fr = &f[next_random(rng) % nf];

		if (fr->contents.len >= 8) {
			*at = (size_t)(fr->contents.ptr - data) +
			      (size_t)(next_random(rng) % (fr->contents.len / 8)) * 8;
			return -1;
		}
	}
	for (int tries = 0; tries < 8; tries++) {
		size_t i = (size_t)(next_random(rng) % n);
		struct hr_object o = hr_dump_object(d, i);

		if (o.size >= 8) {
			*at = (size_t)(o.data - data) + (size_t)pick_word(d, o, rng);
			return (int64_t)i;
		}
	}
	return -2;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
	uint64_t rng = seed, value;
	struct hr_error err = { 0 };
	struct hr_dump *d;
	struct hr_object target;
	int64_t holder;
	size_t at = 0;

	if (seed % 2 || !(d = hr_dump_open_bytes(data, size, NAME, &err)))
		return LLVMFuzzerMutate(data, size, max_size);
	if (hr_dump_params(d)->ptr_size != 8 || hr_dump_params(d)->big_endian ||
	    !hr_dump_object_count(d) || (holder = pick_place(d, data, &rng, &at)) == -2) {
		hr_dump_free(d);
		return LLVMFuzzerMutate(data, size, max_size);
	}
	target = hr_dump_object(d, (size_t)(next_random(&rng) % hr_dump_object_count(d)));
	if (holder >= 0 && next_random(&rng) % 8 == 0)
		target = hr_dump_object(d, (size_t)holder); /* a cycle of one */
	value = target.addr;
	if (next_random(&rng) % 4 == 0) /* an interior pointer */
		value += next_random(&rng) % target.size;
	hr_dump_free(d);
	for (int b = 0; b < 8; b++) /* little-endian: ptr_size 8 and not big-endian, above */
		data[at + (size_t)b] = (uint8_t)(value >> (8 * b));
	return size;
}
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hr_error err = { 0 };
	struct hr_dump *dump = hr_dump_open_bytes(data, size, NAME, &err);

	if (!dump) {
		FUZZ_CHECK_ERROR(&err, HR_EINPUT, NAME ": byte ");
		return 0;
	}
	analyze(dump);
	hr_dump_free(dump);
	return 0;
}
