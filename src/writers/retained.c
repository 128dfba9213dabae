/* SPDX-License-Identifier: Apache-2.0 */
/*
 * retained.c - what would be freed if a variable let go: the root variables and the
 * objects of largest retained size, from the dominator tree (see writers.h).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "heapref/writers.h"
#include "writers_internal.h"

/* One row: a heap graph node and its retained size. */
struct ranked {
	uint64_t bytes;
	uint32_t node;
};

/* Larger retained bytes first; ties by node id, so the output is stable. */
static bool ranks_before(const struct ranked *a, const struct ranked *b)
{
	return a->bytes != b->bytes ? a->bytes > b->bytes : a->node < b->node;
}

static int cmp_ranked(const void *pa, const void *pb)
{
	return ranks_before(pa, pb) ? -1 : ranks_before(pb, pa) ? 1 : 0;
}

/*
 * The best `keep` of a stream of rows, in a min-heap on rank (its worst row on top),
 * so that choosing the top N of 40 million objects costs O(n log N) and N rows.
 */
struct top_rows {
	struct ranked *rows;
	size_t n, keep;
};

static void sift_down(struct top_rows *t, size_t i)
{
	for (;;) {
		size_t worst = i, l = 2 * i + 1, r = l + 1;

		if (l < t->n && ranks_before(&t->rows[worst], &t->rows[l]))
			worst = l;
		if (r < t->n && ranks_before(&t->rows[worst], &t->rows[r]))
			worst = r;
		if (worst == i)
			return;
		struct ranked tmp = t->rows[i];

		t->rows[i] = t->rows[worst];
		t->rows[worst] = tmp;
		i = worst;
	}
}

static void offer(struct top_rows *t, struct ranked row)
{
	if (t->n < t->keep) {
		size_t i = t->n++;

		t->rows[i] = row;
		while (i > 0 && ranks_before(&t->rows[(i - 1) / 2], &t->rows[i])) {
			struct ranked tmp = t->rows[i];

			t->rows[i] = t->rows[(i - 1) / 2];
			t->rows[(i - 1) / 2] = tmp;
			i = (i - 1) / 2;
		}
	} else if (t->keep && ranks_before(&row, &t->rows[0])) {
		t->rows[0] = row;
		sift_down(t, 0);
	}
}

/* The `keep` best of the nodes first .. last-1 that are reached, best first. */
static int rank_nodes(const struct hr_heap_dominators *hd, uint32_t first, uint32_t last,
		      size_t keep, struct top_rows *t)
{
	*t = (struct top_rows){ .keep = keep ? keep : (size_t)(last - first) };
	t->rows = malloc((t->keep + 1) * sizeof(*t->rows));
	if (!t->rows)
		return HR_ENOMEM;
	for (uint32_t id = first; id < last; id++) {
		struct hr_dom_node n = hr_heap_dom_node(hd, id);

		if (n.idom != HR_DOM_NONE)
			offer(t, (struct ranked){ n.retained_bytes, id });
	}
	qsort(t->rows, t->n, sizeof(*t->rows), cmp_ranked);
	return HR_OK;
}

/* What the rows read besides the dominator tree. */
struct retained_writer {
	FILE *out;
	const struct hr_dump *dump;
	const struct hr_chains *tree;
	const struct hr_scan_result *result;
	const struct hr_heap_dominators *hd;
	const struct hr_retained_options *opt;
};

/* An object's type as the typed walk read it, as a user names it (with its entries). */
static int write_object_type(const struct retained_writer *w, uint32_t obj, bool what)
{
	struct hr_suspect_sources src = { w->dump, w->opt->img, w->tree, w->result, w->hd,
					   NULL, NULL, 1 };
	struct hr_object_description d;
	int rc = hr_describe_object(&src, obj, &d);

	if (!rc)
		fputs(what ? d.what : d.type, w->out);
	hr_object_description_release(&d);
	return rc;
}

static int write_row(const struct retained_writer *w, const struct hr_dom_node *n)
{
	FILE *out = w->out;
	struct hr_object o = { 0 };
	uint32_t node = n->root;
	int rc = HR_OK;

	if (n->object != UINT32_MAX) {
		o = hr_dump_object(w->dump, n->object);
		node = hr_result_reached_by(w->result, n->object).node;
	}
	if (w->opt->tsv) {
		fputs(n->object == UINT32_MAX ? "root\t" : "object\t", out);
		write_chain(out, w->tree, node);
		fputc('\t', out);
		if (n->object == UINT32_MAX)
			fputc('-', out);
		else
			rc = write_object_type(w, n->object, false);
		fprintf(out, "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t", o.size, n->retained_bytes,
			n->retained_objects);
		if (n->object == UINT32_MAX)
			fputs("-\n", out);
		else
			fprintf(out, "0x%" PRIx64 "\n", o.addr);
		return rc;
	}
	fprintf(out, "%14" PRIu64 " %10" PRIu64 "  ", n->retained_bytes, n->retained_objects);
	if (n->object != UINT32_MAX) {
		fprintf(out, "%10" PRIu64 "  0x%-14" PRIx64 " ", o.size, o.addr);
		rc = write_object_type(w, n->object, true);
		fputs("  ", out);
	}
	write_chain(out, w->tree, node);
	fputc('\n', out);
	return rc;
}

/* "main.a + main.b" (+ "..." when more roots share it than a group names). */
static void write_group_roots(const struct retained_writer *w, const struct hr_shared_group *g)
{
	for (uint8_t i = 0; i < g->nroots; i++) {
		uint32_t chain = hr_heap_graph_root_chain(hr_heap_dom_graph(w->hd), g->roots[i]);

		if (i)
			fputs(" + ", w->out);
		fputs(hr_chains_name(w->tree, hr_chains_node(w->tree, chain)->name), w->out);
	}
	if (g->more_roots)
		fputs(" + ...", w->out);
}

/* The groups of roots sharing memory none of them retains alone, biggest first. */
static void write_groups(const struct retained_writer *w, const struct hr_shared_group *g,
			 size_t n)
{
	size_t shown = w->opt->top && w->opt->top < n ? w->opt->top : n;

	if (!w->opt->tsv && n)
		fprintf(w->out, "\nroots sharing memory that none of them retains alone, by group\n"
				"%14s %10s  %s\n", "retained bytes", "objects", "roots");
	for (size_t i = 0; i < shown; i++) {
		if (w->opt->tsv) {
			fputs("group\t", w->out);
			write_group_roots(w, &g[i]);
			fprintf(w->out, "\t-\t0\t%" PRIu64 "\t%" PRIu64 "\t-\n", g[i].bytes,
				g[i].objects);
			continue;
		}
		fprintf(w->out, "%14" PRIu64 " %10" PRIu64 "  ", g[i].bytes, g[i].objects);
		write_group_roots(w, &g[i]);
		fputc('\n', w->out);
	}
}

/* What no single root retains: the objects whose immediate dominator is the virtual root. */
static void shared_totals(const struct hr_heap_dominators *hd, uint64_t *bytes, uint64_t *objects)
{
	*bytes = *objects = 0;
	for (uint32_t id = hr_heap_dom_root_count(hd) + 1; id < hr_heap_dom_count(hd); id++) {
		struct hr_dom_node n = hr_heap_dom_node(hd, id);

		if (n.idom == 0) {
			*bytes += n.retained_bytes;
			*objects += n.retained_objects;
		}
	}
}

static void write_text_heads(FILE *out, const struct hr_heap_dominators *hd, bool roots)
{
	struct hr_dom_node all = hr_heap_dom_node(hd, 0);
	uint64_t shared_bytes, shared_objects;

	if (roots) {
		fprintf(out, "reachable: %" PRIu64 " bytes in %" PRIu64 " objects\n\n"
			     "root variables by retained size (what would be freed if each let go)\n"
			     "%14s %10s  %s\n",
			all.retained_bytes, all.retained_objects, "retained bytes", "objects", "root");
		return;
	}
	shared_totals(hd, &shared_bytes, &shared_objects);
	fprintf(out, "\nshared by several roots, retained by none of them: %" PRIu64
		     " bytes in %" PRIu64 " objects\n\n"
		     "objects by retained size\n%14s %10s  %10s  %-16s %s\n",
		shared_bytes, shared_objects, "retained bytes", "objects", "size", "address",
		"type  chain");
}

int hr_write_retained(FILE *out, const struct hr_dump *dump, const struct hr_chains *tree,
		      const struct hr_scan_result *result, const struct hr_heap_dominators *hd,
		      const struct hr_retained_options *opt, struct hr_error *err)
{
	struct retained_writer w = { out, dump, tree, result, hd, opt };
	uint32_t nroots = hr_heap_dom_root_count(hd);
	struct top_rows roots, objects = { 0 };
	struct hr_shared_group *groups = NULL;
	size_t ngroups = 0;
	int rc;

	if ((rc = rank_nodes(hd, 1, nroots + 1, opt->top, &roots)) ||
	    (rc = rank_nodes(hd, nroots + 1, hr_heap_dom_count(hd), opt->top, &objects)) ||
	    (rc = hr_heap_dom_shared_groups(hd, 0, &groups, &ngroups, err)))
		goto out;
	if (opt->tsv)
		fputs("kind\tchain\ttype\tsize\tretained_bytes\tretained_objects\taddress\n", out);
	else
		write_text_heads(out, hd, true);
	for (size_t i = 0; i < roots.n && !rc; i++) {
		struct hr_dom_node n = hr_heap_dom_node(hd, roots.rows[i].node);

		if (n.retained_bytes || opt->tsv)
			rc = write_row(&w, &n);
	}
	write_groups(&w, groups, ngroups);
	if (!opt->tsv) {
		write_text_heads(out, hd, false);
	} else {
		uint64_t shared_bytes, shared_objects;

		shared_totals(hd, &shared_bytes, &shared_objects);
		fprintf(out, "shared\t-\t-\t0\t%" PRIu64 "\t%" PRIu64 "\t-\n", shared_bytes,
			shared_objects);
	}
	for (size_t i = 0; i < objects.n && !rc; i++) {
		struct hr_dom_node n = hr_heap_dom_node(hd, objects.rows[i].node);

		rc = write_row(&w, &n);
	}
out:
	free(roots.rows);
	free(objects.rows);
	hr_shared_groups_free(groups, ngroups);
	if (rc && rc != err->code) /* the groups set err themselves */
		return hr_error_set(err, rc, "out of memory for the retained sizes");
	if (rc)
		return rc;
	if (ferror(out))
		return hr_error_set(err, HR_EIO, "cannot write the retained sizes");
	return HR_OK;
}
