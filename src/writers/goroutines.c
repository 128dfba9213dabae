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
	uint32_t id;        /* its index before sorting, as group_of[] names it */
	uint32_t first;     /* a goroutine of the group (index), for its names */
	uint32_t count;
	uint64_t objects, bytes;
	uint64_t stack_bytes;
	uint64_t retained;  /* leaked groups: what only their goroutines keep alive */
	uint8_t verdict;    /* enum hr_leak_verdict, the same for all its goroutines */
};

struct ctx {
	const struct hr_dump *d;
	const struct hr_image *img;   /* the binary where the process loaded it, or NULL */
	const struct hr_goroutine *g;
	const struct hr_frame *frames;
	const struct hr_goroutine_leaks *leaks; /* or NULL: every verdict unknown */
	size_t ng;
};

static enum hr_leak_verdict verdict_of(const struct ctx *c, uint32_t i)
{
	return c->leaks ? (enum hr_leak_verdict)c->leaks->verdict[i] : HR_LEAK_UNKNOWN;
}

/* The function holding the go statement that created goroutine g, "?" if unknown. */
static const char *creator(const struct ctx *c, const struct hr_goroutine *g)
{
	int64_t fn = c->img ? hr_image_func_at(c->img, g->gopc) : -1;

	return fn < 0 ? "?" : hr_binary_func(c->img->bin, (size_t)fn)->name;
}

/* Same creator, functions on the stack, state and verdict: the same kind of goroutine. */
static bool same_kind(const struct ctx *c, uint32_t a, uint32_t b)
{
	const struct hr_goroutine *x = &c->g[a], *y = &c->g[b];

	if (strcmp(creator(c, x), creator(c, y)) || x->status != y->status ||
	    verdict_of(c, a) != verdict_of(c, b) ||
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

	if ((a->verdict == HR_LEAK_YES) != (b->verdict == HR_LEAK_YES))
		return a->verdict == HR_LEAK_YES ? -1 : 1; /* leaked groups first */
	if (a->bytes + a->stack_bytes != b->bytes + b->stack_bytes)
		return a->bytes + a->stack_bytes > b->bytes + b->stack_bytes ? -1 : 1;
	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	return a->first < b->first ? -1 : a->first > b->first;
}

/*
 * The groups: each goroutine joins the first group of its kind (a linear search over
 * the groups so far: there are few kinds even among many goroutines); group_of[i] is
 * goroutine i's group.
 */
static struct group *make_groups(const struct ctx *c, const uint64_t *objects,
				 const uint64_t *bytes, uint32_t *group_of, size_t *ngroups)
{
	struct group *groups = malloc((c->ng + 1) * sizeof(*groups));

	*ngroups = 0;
	for (uint32_t i = 0; groups && i < c->ng; i++) {
		size_t k = 0;

		while (k < *ngroups && !same_kind(c, groups[k].first, i))
			k++;
		if (k == *ngroups)
			groups[(*ngroups)++] = (struct group){ .id = (uint32_t)k, .first = i,
							       .verdict = verdict_of(c, i) };
		group_of[i] = (uint32_t)k;
		groups[k].count++;
		groups[k].objects += objects[i];
		groups[k].bytes += bytes[i];
		groups[k].stack_bytes += c->leaks ? c->leaks->stack_bytes[i] : 0;
	}
	return groups;
}

/* What each leaked group alone keeps alive on the heap (before the groups are sorted). */
static int retained_by_leaked(const struct ctx *c, struct group *groups, size_t ngroups,
			      const uint32_t *group_of, struct hr_error *err)
{
	bool *wanted = calloc(ngroups + 1, sizeof(*wanted)), any = false;
	uint64_t *bytes = calloc(ngroups + 1, sizeof(*bytes));
	uint64_t *objects = calloc(ngroups + 1, sizeof(*objects));
	int rc = HR_OK;

	if (!wanted || !bytes || !objects)
		rc = hr_error_set(err, HR_ENOMEM, "out of memory for the goroutines");
	for (size_t k = 0; !rc && k < ngroups; k++)
		any |= wanted[k] = groups[k].verdict == HR_LEAK_YES;
	if (!rc && any)
		rc = hr_goroutine_leaks_retained(c->leaks, c->d, group_of, ngroups, wanted, bytes,
						 objects, err);
	for (size_t k = 0; !rc && k < ngroups; k++)
		groups[k].retained = bytes[k];
	free(wanted);
	free(bytes);
	free(objects);
	return rc;
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

/* The ids of group k's goroutines, space-separated (tsv). */
static void write_goids(FILE *out, const struct ctx *c, const uint32_t *group_of, size_t k)
{
	bool first = true;

	for (size_t i = 0; i < c->ng; i++) {
		if (group_of[i] != k)
			continue;
		fprintf(out, "%s%" PRIu64, first ? "" : " ", c->g[i].goid);
		first = false;
	}
}

/* The text view's widths of its two columns of names, to keep the others aligned. */
struct widths {
	int wait, creator;
};

static void write_group(FILE *out, const struct ctx *c, const struct group *grp,
			const struct widths *w)
{
	const struct hr_goroutine *g = &c->g[grp->first];
	char reason[160], retained[24] = "-";

	if (grp->verdict == HR_LEAK_YES)
		snprintf(retained, sizeof(retained), "%" PRIu64, grp->retained);
	fprintf(out, "%12" PRIu64 " %10" PRIu64 " %12" PRIu64 " %12s %6" PRIu32 "  %-7s  %-8s %-*s  %-*s  ",
		grp->bytes, grp->objects, grp->stack_bytes, retained, grp->count,
		hr_leak_verdict_name(grp->verdict), hr_goroutine_status_name(g->status), w->wait,
		wait_text(c, g, reason, sizeof(reason)), w->creator, creator(c, g));
	write_stack(out, c, g, false);
	fputc('\n', out);
}

static void write_group_tsv(FILE *out, const struct ctx *c, const struct group *grp,
			    const uint32_t *group_of)
{
	const struct hr_goroutine *g = &c->g[grp->first];
	uint64_t waited = hr_goroutine_waited_ns(hr_dump_params(c->d), g) / 1000000000u;

	fprintf(out, "%" PRIu32 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t", grp->count, grp->bytes,
		grp->objects, grp->stack_bytes);
	if (grp->verdict == HR_LEAK_YES)
		fprintf(out, "%" PRIu64, grp->retained);
	fprintf(out, "\t%s\t%s\t%.*s\t%s\t", hr_leak_verdict_name(grp->verdict),
		hr_goroutine_status_name(g->status), (int)g->wait_reason.len,
		(const char *)g->wait_reason.ptr, creator(c, g));
	if (waited)
		fprintf(out, "%" PRIu64, waited);
	fputc('\t', out);
	write_goids(out, c, group_of, grp->id);
	fputc('\t', out);
	write_stack(out, c, g, true);
	fputc('\n', out);
}

/* Why goroutine i's verdict is unknown (NULL without verdicts). */
static const char *why_of(const struct ctx *c, uint32_t i)
{
	return c->leaks ? c->leaks->why[i] : NULL;
}

/* Why the snapshot cannot judge some goroutines: each reason once, with its count. */
static void write_unknown_reasons(FILE *out, const struct ctx *c, const struct group *groups,
				  size_t ngroups)
{
	for (size_t k = 0; k < ngroups; k++) {
		const char *why = why_of(c, groups[k].first);
		uint64_t count = 0;
		bool said = false;

		if (groups[k].verdict != HR_LEAK_UNKNOWN)
			continue;
		for (size_t j = 0; j < k && !said; j++) /* said for an earlier group */
			said = groups[j].verdict == HR_LEAK_UNKNOWN && why_of(c, groups[j].first) == why;
		for (size_t j = k; j < ngroups && !said; j++)
			if (groups[j].verdict == HR_LEAK_UNKNOWN && why_of(c, groups[j].first) == why)
				count += groups[j].count;
		if (!said)
			fprintf(out, "unknown: %" PRIu64 " goroutines: %s\n", count,
				why ? why : "no verdict (the analysis did not look for leaks)");
	}
}

/* The header: counts, what the leaked groups hold, and (text) the column names. */
static void write_header(FILE *out, const struct ctx *c, const struct group *groups,
			 size_t ngroups, const struct widths *w, bool tsv)
{
	uint64_t leaked = 0, unknown = 0, heap = 0, stacks = 0, retained = 0;

	if (tsv) {
		fputs("count\tbytes\tobjects\tstack_bytes\tretained_bytes\tleaked\tstatus\t"
		      "wait_reason\tcreated_by\twaited_s\tgoids\tstack\n", out);
		return;
	}
	for (size_t k = 0; k < ngroups; k++) {
		unknown += groups[k].verdict == HR_LEAK_UNKNOWN ? groups[k].count : 0;
		if (groups[k].verdict != HR_LEAK_YES)
			continue;
		leaked += groups[k].count;
		heap += groups[k].bytes;
		stacks += groups[k].stack_bytes;
		retained += groups[k].retained;
	}
	fprintf(out, "%zu goroutines in %zu groups; %" PRIu64 " leaked (blocked on a channel, "
		     "select or sync primitive no goroutine that may run can reach), %" PRIu64
		     " unknown\n", c->ng, ngroups, leaked, unknown);
	if (leaked)
		fprintf(out, "leaked groups: %" PRIu64 " bytes of heap reached first, %" PRIu64
			     " bytes of stacks, %" PRIu64 " bytes of heap only they keep alive\n",
			heap, stacks, retained);
	write_unknown_reasons(out, c, groups, ngroups);
	fprintf(out, "%12s %10s %12s %12s %6s  %-7s  %-8s %-*s  %-*s  %s\n", "bytes", "objects",
		"stack bytes", "retained", "count", "leaked", "status", w->wait, "wait reason",
		w->creator, "created by", "stack, innermost first");
}

static struct widths widths_of(const struct ctx *c, const struct group *groups, size_t ngroups)
{
	struct widths w = { (int)strlen("wait reason"), (int)strlen("created by") };
	char reason[160];

	for (size_t k = 0; k < ngroups; k++) {
		const struct hr_goroutine *g = &c->g[groups[k].first];
		int a = (int)strlen(wait_text(c, g, reason, sizeof(reason)));
		int b = (int)strlen(creator(c, g));

		w.wait = a > w.wait ? a : w.wait;
		w.creator = b > w.creator ? b : w.creator;
	}
	return w;
}

int hr_write_goroutines(FILE *out, const struct hr_dump *dump, const struct hr_image *img,
			const struct hr_scan_result *result,
			const struct hr_goroutine_leaks *leaks, bool tsv, struct hr_error *err)
{
	size_t nf, ngroups = 0, nshares = 0;
	struct ctx c = { dump, img, NULL, hr_dump_frames(dump, &nf), leaks, 0 };
	const struct hr_goroutine_share *shares = hr_result_shares(result, &nshares);
	uint64_t *objects, *bytes;
	uint32_t *group_of;
	struct group *groups = NULL;
	struct widths w;
	int rc = HR_OK;

	c.g = hr_dump_goroutines(dump, &c.ng);
	objects = calloc(c.ng + 1, sizeof(*objects));
	bytes = calloc(c.ng + 1, sizeof(*bytes));
	group_of = calloc(c.ng + 1, sizeof(*group_of));
	if (!objects || !bytes || !group_of)
		goto nomem;
	for (size_t i = 0; i < nshares; i++) {
		uint32_t g = shares[i].goroutine;

		if (g && g <= c.ng) {
			objects[g - 1] += shares[i].objects;
			bytes[g - 1] += shares[i].bytes;
		}
	}
	if (!(groups = make_groups(&c, objects, bytes, group_of, &ngroups)))
		goto nomem;
	if ((rc = retained_by_leaked(&c, groups, ngroups, group_of, err)))
		goto out;
	qsort(groups, ngroups, sizeof(*groups), by_bytes);
	w = widths_of(&c, groups, ngroups);
	write_header(out, &c, groups, ngroups, &w, tsv);
	for (size_t k = 0; k < ngroups; k++) {
		if (tsv)
			write_group_tsv(out, &c, &groups[k], group_of);
		else
			write_group(out, &c, &groups[k], &w);
	}
	if (ferror(out))
		rc = hr_error_set(err, HR_EIO, "cannot write the goroutines");
	goto out;
nomem:
	rc = hr_error_set(err, HR_ENOMEM, "out of memory for the goroutines");
out:
	free(objects);
	free(bytes);
	free(group_of);
	free(groups);
	return rc;
}

