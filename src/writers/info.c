/* SPDX-License-Identifier: Apache-2.0 */
/*
 * info.c - the text summary of a heap dump (`heapref info`), see writers.h.
 *
 * Each line is "label: value" so that a person can read it and a test can pick a
 * figure out of it; the layout is documented in docs/cli.md.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "heapref/writers.h"

#define SIZE_CLASSES 64

struct goroutine_group {
	uint64_t status;
	struct hr_bytes reason;
	uint64_t count;
};

static void print_str(FILE *out, struct hr_bytes s)
{
	if (s.len) /* an absent string has no pointer: fwrite(NULL, ...) is undefined */
		fwrite(s.ptr, 1, (size_t)s.len, out);
}

/* Objects the records of a go1.3 or go1.4 dump give a type. */
static size_t typed_objects(const struct hr_dump *d)
{
	struct hr_object_type t;
	size_t n = 0;

	for (size_t i = 0; i < hr_dump_object_count(d); i++)
		n += hr_dump_object_type(d, i, &t);
	return n;
}

/* What the heap came from: a dump's format, a core, or a core of a live process. */
static void print_format(FILE *out, const struct hr_provenance *prov)
{
	if (prov->source == HR_SOURCE_DUMP)
		fprintf(out, "format:        go1.%u heap dump%s\n", prov->dump_format,
			prov->prerelease ? ", the pre-release layout (roots as pointers)" : "");
	else if (prov->source == HR_SOURCE_PROCESS)
		fprintf(out, "format:        core of a live process (records: what a dump of it "
			"would hold)\n");
	else
		fprintf(out, "format:        core file (records: what a dump of it would hold)\n");
}

static void print_header(FILE *out, const struct hr_dump *d)
{
	const struct hr_dump_params *p = hr_dump_params(d);
	const struct hr_provenance *prov = hr_dump_provenance(d);

	fprintf(out, "file:          %s\n", hr_dump_path(d));
	fprintf(out, "size:          %" PRIu64 " bytes\n", hr_dump_file_size(d));
	print_format(out, prov);
	if (prov->source == HR_SOURCE_DUMP && prov->dump_format < 5) {
		/* the release is the format's; the params record holds GOEXPERIMENT */
		fprintf(out, "go version:    go1.%u (the format's)\nGOEXPERIMENT:  ",
			prov->dump_format);
		if (prov->prerelease)
			fprintf(out, "(not in this layout)");
		print_str(out, hr_dump_goexperiment(d));
		fprintf(out, "\ntyped objects: %zu of %zu, by the dump's type records\n",
			typed_objects(d), hr_dump_object_count(d));
	} else {
		fprintf(out, "go version:    %s\n", prov->go_version[0] ? prov->go_version : "unknown");
	}
	fprintf(out, "arch:          ");
	if (p->goarch.len)
		print_str(out, p->goarch);
	else
		fprintf(out, "unknown");
	fprintf(out, " (%" PRIu32 "-byte pointers, %s-endian)", p->ptr_size,
		p->big_endian ? "big" : "little");
	if (p->ncpu)
		fprintf(out, ", %" PRIu64 " CPUs", p->ncpu);
	fprintf(out, "\nheap range:    0x%" PRIx64 "-0x%" PRIx64 " (%" PRIu64 " bytes)\n",
		p->heap_start, p->heap_end, p->heap_end - p->heap_start);
}

static void print_records(FILE *out, const struct hr_dump *d)
{
	unsigned kind;

	fprintf(out, "records:\n");
	for (kind = 0; kind < HR_REC_KIND_COUNT; kind++)
		if (kind < HR_REC_GO_KINDS || hr_dump_provenance(d)->prerelease)
			fprintf(out, "  %-18s %12" PRIu64 "\n", hr_record_kind_name(kind),
				hr_dump_record_count(d, kind));
}

/* Histogram bucket of a size: b holds sizes in [2^b, 2^(b+1)). */
static unsigned size_bucket(uint64_t size)
{
	return size ? 63u - (unsigned)__builtin_clzll(size) : 0;
}

static void print_objects(FILE *out, const struct hr_dump *d)
{
	uint64_t count[SIZE_CLASSES] = { 0 }, bytes[SIZE_CLASSES] = { 0 };
	size_t i, n = hr_dump_object_count(d);
	unsigned b;

	for (i = 0; i < n; i++) {
		uint64_t size = hr_dump_object(d, i).size;

		b = size_bucket(size);
		count[b]++;
		bytes[b] += size;
	}
	fprintf(out, "objects:       %zu objects, %" PRIu64 " bytes, %" PRIu64 " pointer words\n", n,
		hr_dump_object_bytes(d), hr_dump_heap_ptr_words(d));
	fprintf(out, "object sizes:\n  %-23s %12s %15s\n", "size (bytes)", "objects", "bytes");
	for (b = 0; b < SIZE_CLASSES; b++) {
		char range[48];

		if (!count[b])
			continue;
		snprintf(range, sizeof(range), "%" PRIu64 "-%" PRIu64, UINT64_C(1) << b,
			 b == 63 ? UINT64_MAX : (UINT64_C(1) << (b + 1)) - 1);
		fprintf(out, "  %-23s %12" PRIu64 " %15" PRIu64 "\n", range, count[b], bytes[b]);
	}
}

static int cmp_group(const void *a, const void *b)
{
	const struct goroutine_group *x = a, *y = b;
	size_t n = x->reason.len < y->reason.len ? (size_t)x->reason.len : (size_t)y->reason.len;
	int c;

	if (x->status != y->status)
		return x->status < y->status ? -1 : 1;
	c = n ? memcmp(x->reason.ptr, y->reason.ptr, n) : 0;
	if (c)
		return c;
	return (x->reason.len > y->reason.len) - (x->reason.len < y->reason.len);
}

/* Goroutines grouped by (status, wait reason); the reason counts only when waiting. */
static void print_goroutines(FILE *out, const struct hr_dump *d)
{
	size_t n, i, ngroups = 0;
	const struct hr_goroutine *g = hr_dump_goroutines(d, &n);
	struct goroutine_group *groups = calloc(n ? n : 1, sizeof(*groups));

	fprintf(out, "goroutines:    %zu\n", n);
	if (!groups)
		return;
	for (i = 0; i < n; i++)
		groups[i] = (struct goroutine_group){
			.status = g[i].status,
			.reason = g[i].status == 4 ? g[i].wait_reason : (struct hr_bytes){ 0 },
			.count = 1,
		};
	qsort(groups, n, sizeof(*groups), cmp_group);
	for (i = 0; i < n; i++) {
		if (ngroups && cmp_group(&groups[ngroups - 1], &groups[i]) == 0)
			groups[ngroups - 1].count++;
		else
			groups[ngroups++] = groups[i];
	}
	for (i = 0; i < ngroups; i++) {
		fprintf(out, "  %-10s %6" PRIu64, hr_goroutine_status_name(groups[i].status),
			groups[i].count);
		if (groups[i].reason.len) {
			fprintf(out, "  (");
			print_str(out, groups[i].reason);
			fprintf(out, ")");
		}
		fprintf(out, "\n");
	}
	free(groups);
}

static void print_segment(FILE *out, const char *label, const struct hr_dump *d,
			  const struct hr_segment *s)
{
	uint64_t words, i, ptrs = 0;

	if (!s->present) {
		fprintf(out, "%-14s absent\n", label);
		return;
	}
	words = s->contents.len / hr_dump_params(d)->ptr_size;
	for (i = 0; i < words; i++)
		ptrs += hr_bit_get(s->ptr_bits, i);
	fprintf(out, "%-14s 0x%" PRIx64 ", %" PRIu64 " bytes, %" PRIu64 " pointer words\n", label,
		s->addr, s->contents.len, ptrs);
}

static void print_tail(FILE *out, const struct hr_dump *d)
{
	const struct hr_memstats *ms = hr_dump_memstats(d);
	size_t nfin, nqueued, nbuckets, nsamples;

	hr_dump_finalizers(d, &nfin);
	hr_dump_queued_finalizers(d, &nqueued);
	hr_dump_memprof_buckets(d, &nbuckets);
	hr_dump_alloc_samples(d, &nsamples);
	print_segment(out, "data segment:", d, hr_dump_data(d));
	print_segment(out, "bss segment:", d, hr_dump_bss(d));
	fprintf(out, "finalizers:    %zu registered, %zu queued\n", nfin, nqueued);
	fprintf(out, "mem profile:   %zu buckets, %zu alloc samples\n", nbuckets, nsamples);
	if (ms)
		fprintf(out, "memstats:      HeapAlloc %" PRIu64 " bytes in %" PRIu64
			     " objects; the dump holds %" PRIu64 " bytes in %zu objects\n",
			ms->heap_alloc, ms->heap_objects, hr_dump_object_bytes(d),
			hr_dump_object_count(d));
	else
		fprintf(out, "memstats:      absent\n");
}

int hr_write_dump_info(FILE *out, const struct hr_dump *d, struct hr_error *err)
{
	print_header(out, d);
	print_records(out, d);
	print_objects(out, d);
	print_goroutines(out, d);
	print_tail(out, d);
	if (fflush(out) != 0 || ferror(out)) /* errno: of the failed flush, or the write before */
		return hr_error_set(err, HR_EIO, "cannot write the summary: %s", strerror(errno));
	return HR_OK;
}

static void print_target(FILE *out, const struct hr_dump *d, uint64_t ptr)
{
	int64_t i = hr_dump_object_at(d, ptr);

	if (i < 0) {
		fprintf(out, "(not a heap object)");
		return;
	}
	struct hr_object o = hr_dump_object(d, (size_t)i);

	fprintf(out, "-> object 0x%" PRIx64 "+%" PRIu64 " (%" PRIu64 " bytes)", o.addr,
		ptr - o.addr, o.size);
}

/*
 * Where addr lies in data or bss, if it does: a global, or an object the compiler
 * allocated statically, which analyze charges under the variable pointing to it.
 */
static void print_segment_place(FILE *out, const struct hr_dump *d, uint64_t addr)
{
	const struct hr_segment *segs[2] = { hr_dump_data(d), hr_dump_bss(d) };
	static const char *const names[2] = { "data", "bss" };

	for (int k = 0; k < 2; k++) {
		const struct hr_segment *g = segs[k];

		if (g->present && addr >= g->addr && addr - g->addr < g->contents.len) {
			fprintf(out, "; in the %s segment at +0x%" PRIx64 " (a global, or an object "
				"the compiler allocated statically: analyze shows it under the "
				"variable pointing to it)", names[k], addr - g->addr);
			return;
		}
	}
}

int hr_write_object_at(FILE *out, const struct hr_dump *d, uint64_t addr, unsigned max_ptrs,
		       struct hr_error *err)
{
	uint32_t ptr_size = hr_dump_params(d)->ptr_size;
	int64_t i = hr_dump_object_at(d, addr);
	uint64_t off, shown = 0, nptrs;

	if (i < 0) {
		fprintf(out, "0x%" PRIx64 ": not in any heap object", addr);
		print_segment_place(out, d, addr);
		fputc('\n', out);
	} else {
		struct hr_object o = hr_dump_object(d, (size_t)i);

		nptrs = hr_dump_object_ptr_count(d, (size_t)i);
		fprintf(out, "0x%" PRIx64 ": object 0x%" PRIx64 "+%" PRIu64 ", %" PRIu64
			     " bytes, %" PRIu64 " pointer words\n",
			addr, o.addr, addr - o.addr, o.size, nptrs);
		for (off = 0; off + ptr_size <= o.size && shown < max_ptrs; off += ptr_size) {
			uint64_t ptr;

			if (!hr_dump_heap_ptr_bit(d, o.addr + off))
				continue;
			ptr = hr_dump_word(d, o.data + off);
			fprintf(out, "  +%-8" PRIu64 " 0x%016" PRIx64 " ", off, ptr);
			print_target(out, d, ptr);
			fputc('\n', out);
			shown++;
		}
		if (shown < nptrs)
			fprintf(out, "  ... %" PRIu64 " more pointer words\n", nptrs - shown);
	}
	if (ferror(out))
		return hr_error_set(err, HR_EIO, "cannot write the object view");
	return HR_OK;
}
