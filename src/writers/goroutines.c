/* SPDX-License-Identifier: Apache-2.0 */
/*
 * goroutines.c - `heapref goroutines`: the goroutines of a dump grouped by who created
 * them, their stack and their state, with the memory their stacks reached first, and the
 * groups that look leaked (see writers.h).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "heapref/binary.h"
#include "heapref/writers.h"

#define STACK_SHOWN 4 /* functions of a group's stack shown, innermost first */

struct group {
	uint32_t first;     /* a goroutine of the group (index), for its names */
	uint32_t count;
	uint64_t objects, bytes;
	bool leaked;
};

struct ctx {
	const struct hr_dump *d;
	const struct hr_image *img;   /* the binary where the process loaded it, or NULL */
	const struct hr_goroutine *g;
	const struct hr_frame *frames;
};

/* Whether goroutine g waits in a channel operation or a select: how leaked ones wait. */
static bool waits_on_channel(const struct hr_goroutine *g)
{
	static const char *const reasons[] = { "chan receive", "chan send", "select" };

	if (strcmp(hr_goroutine_status_name(g->status), "waiting"))
		return false;
	for (size_t k = 0; k < sizeof(reasons) / sizeof(reasons[0]); k++) {
		size_t len = strlen(reasons[k]);

		if (g->wait_reason.len >= len && !memcmp(g->wait_reason.ptr, reasons[k], len))
			return true;
	}
	return false;
}

/* The function holding the go statement that created goroutine g, "?" if unknown. */
static const char *creator(const struct ctx *c, const struct hr_goroutine *g)
{
	int64_t fn = c->img ? hr_image_func_at(c->img, g->gopc) : -1;

	return fn < 0 ? "?" : hr_binary_func(c->img->bin, (size_t)fn)->name;
}

/* Same creator, same functions on the stack, same state: the same kind of goroutine. */
static bool same_kind(const struct ctx *c, uint32_t a, uint32_t b)
{
	const struct hr_goroutine *x = &c->g[a], *y = &c->g[b];

	if (strcmp(creator(c, x), creator(c, y)) || x->status != y->status ||
	    x->wait_reason.len != y->wait_reason.len ||
	    memcmp(x->wait_reason.ptr, y->wait_reason.ptr, x->wait_reason.len) ||
	    x->frame_count != y->frame_count)
		return false;
	for (uint32_t k = 0; k < x->frame_count; k++) {
		const struct hr_bytes *f = &c->frames[x->first_frame + k].func_name;
		const struct hr_bytes *h = &c->frames[y->first_frame + k].func_name;

		if (f->len != h->len || memcmp(f->ptr, h->ptr, f->len))
			return false;
	}
	return true;
}

static int by_bytes(const void *pa, const void *pb)
{
	const struct group *a = pa, *b = pb;

	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	return a->first < b->first ? -1 : a->first > b->first;
}

/*
 * The groups: each goroutine joins the first group of its kind (a linear search over
 * the groups so far: there are few kinds even among many goroutines).
 */
static struct group *make_groups(const struct ctx *c, size_t ng, const uint64_t *objects,
				 const uint64_t *bytes, size_t *ngroups)
{
	struct group *groups = malloc((ng + 1) * sizeof(*groups));

	*ngroups = 0;
	for (uint32_t i = 0; groups && i < ng; i++) {
		size_t k = 0;

		while (k < *ngroups && !same_kind(c, groups[k].first, i))
			k++;
		if (k == *ngroups)
			groups[(*ngroups)++] = (struct group){ .first = i };
		groups[k].count++;
		groups[k].objects += objects[i];
		groups[k].bytes += bytes[i];
	}
	for (size_t k = 0; groups && k < *ngroups; k++) {
		const struct hr_goroutine *g = &c->g[groups[k].first];

		/* waited through a GC (the runtime stamps wait_since then), holding memory */
		groups[k].leaked = waits_on_channel(g) && g->wait_since && groups[k].bytes;
	}
	if (groups)
		qsort(groups, *ngroups, sizeof(*groups), by_bytes);
	return groups;
}

static void write_stack(FILE *out, const struct ctx *c, const struct hr_goroutine *g, bool tsv)
{
	for (uint32_t k = 0; k < g->frame_count && (tsv || k < STACK_SHOWN); k++) {
		const struct hr_bytes *f = &c->frames[g->first_frame + k].func_name;

		fprintf(out, "%s%.*s", k ? (tsv ? " " : " <- ") : "", (int)f->len,
			(const char *)f->ptr);
	}
	if (!tsv && g->frame_count > STACK_SHOWN)
		fputs(" <- ...", out);
}

/*
 * The wait reason with how long the goroutine has waited, where the heap's clock is
 * known (a core heapref took): "chan receive, 12 min", as Go's own tracebacks say it.
 */
static const char *wait_text(const struct ctx *c, const struct hr_goroutine *g, char *buf,
			     size_t len)
{
	uint64_t s = hr_goroutine_waited_ns(hr_dump_params(c->d), g) / 1000000000u;
	int n = snprintf(buf, len, "%.*s", (int)g->wait_reason.len, (const char *)g->wait_reason.ptr);

	if (s && n >= 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, s >= 60 ? ", %" PRIu64 " min" : ", %" PRIu64 " s",
			 s >= 60 ? s / 60 : s);
	return buf;
}

static void write_group(FILE *out, const struct ctx *c, const struct group *grp, bool tsv)
{
	const struct hr_goroutine *g = &c->g[grp->first];
	const char *status = hr_goroutine_status_name(g->status);
	uint64_t waited = hr_goroutine_waited_ns(hr_dump_params(c->d), g) / 1000000000u;
	char reason[160];

	if (tsv) {
		fprintf(out, "%" PRIu32 "\t%" PRIu64 "\t%" PRIu64 "\t%s\t%.*s\t%s\t%s\t", grp->count,
			grp->bytes, grp->objects, status, (int)g->wait_reason.len,
			(const char *)g->wait_reason.ptr, creator(c, g), grp->leaked ? "yes" : "no");
		if (waited)
			fprintf(out, "%" PRIu64, waited);
		fputc('\t', out);
	} else {
		fprintf(out, "%12" PRIu64 " %10" PRIu64 " %6" PRIu32 "  %-8s %-22s %s  %-28s ",
			grp->bytes, grp->objects, grp->count, status,
			wait_text(c, g, reason, sizeof(reason)), grp->leaked ? "LEAK?" : "     ",
			creator(c, g));
	}
	write_stack(out, c, g, tsv);
	fputc('\n', out);
}

int hr_write_goroutines(FILE *out, const struct hr_dump *dump, const struct hr_image *img,
			const struct hr_scan_result *result, bool tsv, struct hr_error *err)
{
	size_t ng, nf, ngroups = 0, leaked = 0;
	struct ctx c = { dump, img, hr_dump_goroutines(dump, &ng), hr_dump_frames(dump, &nf) };
	uint64_t *objects = calloc(ng + 1, sizeof(*objects)), *bytes = calloc(ng + 1, sizeof(*bytes));
	struct group *groups = NULL;

	size_t nshares = 0;
	const struct hr_goroutine_share *shares = hr_result_shares(result, &nshares);

	if (!objects || !bytes)
		goto nomem;
	for (size_t i = 0; i < nshares; i++) {
		uint32_t g = shares[i].goroutine;

		if (g && g <= ng) {
			objects[g - 1] += shares[i].objects;
			bytes[g - 1] += shares[i].bytes;
		}
	}
	if (!(groups = make_groups(&c, ng, objects, bytes, &ngroups)))
		goto nomem;
	for (size_t k = 0; k < ngroups; k++)
		leaked += groups[k].leaked ? groups[k].count : 0;
	if (tsv)
		fputs("count\tbytes\tobjects\tstatus\twait_reason\tcreated_by\tlikely_leaked\t"
		      "waited_s\tstack\n", out);
	else
		fprintf(out, "%zu goroutines in %zu groups; %zu likely leaked (LEAK?: blocked in a "
			     "channel operation or select since before a GC, holding memory)\n"
			     "%12s %10s %6s  %-8s %-22s %5s  %-28s %s\n",
			ng, ngroups, leaked, "bytes", "objects", "count", "status", "wait reason", "",
			"created by", "stack, innermost first");
	for (size_t k = 0; k < ngroups; k++)
		write_group(out, &c, &groups[k], tsv);
	free(objects);
	free(bytes);
	free(groups);
	if (ferror(out))
		return hr_error_set(err, HR_EIO, "cannot write the goroutines");
	return HR_OK;
nomem:
	free(objects);
	free(bytes);
	free(groups);
	return hr_error_set(err, HR_ENOMEM, "out of memory for the goroutines");
}
