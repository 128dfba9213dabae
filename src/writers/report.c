/* SPDX-License-Identifier: Apache-2.0 */
/*
 * report.c - the chain tree as a condensed text report (see writers.h).
 *
 * Every line shows a cumulative value: what is reached through that chain. A chain whose
 * bytes are under the cutoff share of everything reachable is not shown on its own but
 * merged into its parent's `<other>` line, and a node's own value gets a `<self>` line,
 * so the lines under a node always add up to the node. A profile of millions of chain
 * nodes thus reads as a page (the idea of Chrome's condensed heap dumps, seeds/004).
 *
 * Node ids are made in order, a child after its parent, so cumulative values are summed
 * in one backward sweep; the tree is walked with an explicit stack, since a chain may be
 * as deep as --max-depth allows.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "heapref/writers.h"
#include "writers_internal.h"

#define INDENT_LEVELS 32 /* deeper lines stay at this indentation and say their depth */


enum line_kind { LINE_NODE, LINE_SELF, LINE_OTHER };

struct pending_line {
	enum line_kind kind;
	uint32_t id;     /* LINE_NODE: the node; else the node the line belongs to */
	uint32_t indent; /* depth below the top line */
};

struct report {
	const struct hr_chains *tree;
	FILE *out;
	size_t n;
	struct chain_value *cum;       /* per node: own value plus all descendants' */
	uint32_t *first_child; /* per node + 1: children of node i at [first_child[i], first_child[i+1]) */
	struct chain_child *children;
	double cutoff_bytes;   /* a chain is shown on its own when it has at least this many */
	struct pending_line *stack;
	size_t nstack, stack_cap;
	int failed_errno;
};

static bool holds_nothing(const struct report *r, size_t id)
{
	return !r->cum[id].objects && !r->cum[id].bytes;
}

/*
 * A child of its parent's list: any that holds something (a node made, then charged no
 * object, is left out, as pprof leaves it out), by its cumulative value.
 */
static bool listed_child(void *ctx, uint32_t id, struct chain_child *c)
{
	const struct report *r = ctx;

	if (holds_nothing(r, id))
		return false;
	c->bytes = (int64_t)r->cum[id].bytes;
	c->objects = (int64_t)r->cum[id].objects;
	return true;
}

static void sum_cumulative(struct report *r)
{
	for (size_t i = 0; i < r->n; i++) {
		const struct hr_chain_node *node = hr_chains_node(r->tree, (uint32_t)i);

		r->cum[i] = (struct chain_value){ node->objects, node->bytes };
	}
	chain_values_sum_up(r->tree, r->n, r->cum);
}

static bool shown(const struct report *r, uint64_t bytes)
{
	return (double)bytes >= r->cutoff_bytes;
}

/* How many of node's children are shown on their own: a prefix of the sorted list. */
static uint32_t shown_children(const struct report *r, uint32_t id)
{
	uint32_t k = 0, count = r->first_child[id + 1] - r->first_child[id];

	while (k < count && shown(r, (uint64_t)r->children[r->first_child[id] + k].bytes))
		k++;
	return k;
}

static struct chain_value own_value(const struct report *r, uint32_t id)
{
	const struct hr_chain_node *node = hr_chains_node(r->tree, id);

	return (struct chain_value){ node->objects, node->bytes };
}

/* What <other> holds under node: the children not shown, and the own value unless it has a <self> line. */
static struct chain_value other_value(const struct report *r, uint32_t id, uint32_t nshown,
				      bool self_line)
{
	struct chain_value s = self_line ? (struct chain_value){ 0, 0 } : own_value(r, id);

	for (uint32_t k = r->first_child[id] + nshown; k < r->first_child[id + 1]; k++) {
		s.objects += (uint64_t)r->children[k].objects;
		s.bytes += (uint64_t)r->children[k].bytes;
	}
	return s;
}

/* The own value gets a line when it is big enough, or when nothing is merged with it. */
static bool self_line(const struct report *r, uint32_t id, uint32_t nshown)
{
	struct chain_value own = own_value(r, id);
	uint32_t nchildren = r->first_child[id + 1] - r->first_child[id];

	return (own.bytes || own.objects) && (shown(r, own.bytes) || nshown == nchildren);
}

static int push_line(struct report *r, enum line_kind kind, uint32_t id, uint32_t indent)
{
	struct pending_line *l = hr_array_push((void **)&r->stack, &r->nstack, &r->stack_cap,
					       sizeof(*l));

	if (!l)
		return HR_ENOMEM;
	*l = (struct pending_line){ kind, id, indent };
	return HR_OK;
}

/* Stacks the lines under a shown node, last first, so they come out in order. */
static int push_lines_below(struct report *r, uint32_t id, uint32_t indent)
{
	uint32_t nshown = shown_children(r, id);
	bool self = self_line(r, id, nshown);
	struct chain_value other = other_value(r, id, nshown, self);
	int rc = HR_OK;

	if (!nshown) /* a leaf of the report: its line already says everything */
		return HR_OK;
	if (other.bytes || other.objects)
		rc = push_line(r, LINE_OTHER, id, indent);
	if (!rc && self)
		rc = push_line(r, LINE_SELF, id, indent);
	for (uint32_t k = nshown; k-- > 0 && !rc;)
		rc = push_line(r, LINE_NODE, r->children[r->first_child[id] + k].id, indent);
	return rc;
}

static void print_row(struct report *r, struct chain_value s, uint32_t indent, const char *label,
		      const char *more)
{
	uint64_t total = r->cum[HR_CHAINS_TOP].bytes;
	double share = total ? 100.0 * (double)s.bytes / (double)total : 100.0;
	uint32_t shown_indent = indent > INDENT_LEVELS ? INDENT_LEVELS : indent;

	if (fprintf(r->out, "%14" PRIu64 " %6.2f%% %12" PRIu64 "  %*s", s.bytes, share,
		    s.objects, (int)(2 * shown_indent), "") < 0 ||
	    (indent > INDENT_LEVELS && fprintf(r->out, "[depth %" PRIu32 "] ", indent) < 0) ||
	    fprintf(r->out, "%s%s\n", label, more) < 0)
		r->failed_errno = errno ? errno : EIO;
}

/* A node's example objects (hr_chains_keep_examples()), if it has any, below its row. */
static void print_examples(struct report *r, uint32_t id, uint32_t indent)
{
	size_t n;
	const struct hr_chain_example *ex = hr_chains_examples(r->tree, id, &n);
	uint32_t shown_indent = (indent > INDENT_LEVELS ? INDENT_LEVELS : indent) + 1;

	if (!n)
		return;
	if (fprintf(r->out, "%36s%*se.g.", "", (int)(2 * shown_indent), "") < 0)
		r->failed_errno = errno ? errno : EIO;
	for (size_t k = 0; k < n; k++)
		if (fprintf(r->out, "%s 0x%" PRIx64 " (%" PRIu64 " B)", k ? "," : "", ex[k].addr,
			    ex[k].size) < 0)
			r->failed_errno = errno ? errno : EIO;
	if (fputc('\n', r->out) == EOF)
		r->failed_errno = errno ? errno : EIO;
}

static void print_line(struct report *r, const struct pending_line *l)
{
	uint32_t nshown, nmerged;
	struct chain_value own;
	bool self;
	char more[64];

	switch (l->kind) {
	case LINE_NODE:
		print_row(r, r->cum[l->id], l->indent,
			  l->id == HR_CHAINS_TOP
				  ? "(everything reachable from the roots)"
				  : hr_chains_name(r->tree, hr_chains_node(r->tree, l->id)->name),
			  "");
		print_examples(r, l->id, l->indent);
		break;
	case LINE_SELF:
		print_row(r, own_value(r, l->id), l->indent, "<self>", "");
		break;
	case LINE_OTHER:
		nshown = shown_children(r, l->id);
		nmerged = r->first_child[l->id + 1] - r->first_child[l->id] - nshown;
		self = self_line(r, l->id, nshown);
		own = own_value(r, l->id);
		snprintf(more, sizeof(more), " (%s%" PRIu32 " smaller chain%s)",
			 !self && (own.bytes || own.objects) ? "own value and " : "", nmerged,
			 nmerged == 1 ? "" : "s");
		print_row(r, other_value(r, l->id, nshown, self), l->indent, "<other>", more);
		break;
	}
}

static int print_tree(struct report *r)
{
	int rc = push_line(r, LINE_NODE, HR_CHAINS_TOP, 0);

	while (!rc && r->nstack && !r->failed_errno) {
		struct pending_line l = r->stack[--r->nstack];

		print_line(r, &l);
		if (l.kind == LINE_NODE)
			rc = push_lines_below(r, l.id, l.indent + 1);
	}
	return rc;
}

static void print_header(struct report *r, double cutoff_percent)
{
	const struct chain_value *all = &r->cum[HR_CHAINS_TOP];

	if (fprintf(r->out, "# heapref: %" PRIu64 " bytes in %" PRIu64 " objects reachable; "
		    "bytes and objects are cumulative; chains under %g%% of the bytes are merged "
		    "into <other>\n%14s %7s %12s  %s\n", all->bytes, all->objects, cutoff_percent,
		    "bytes", "share", "objects", "chain") < 0)
		r->failed_errno = errno ? errno : EIO;
}

static void report_release(struct report *r)
{
	free(r->cum);
	free(r->first_child);
	free(r->children);
	free(r->stack);
}

int hr_write_chain_report(FILE *out, const struct hr_chains *tree, double cutoff_percent,
			  struct hr_error *err)
{
	struct report r = { .tree = tree, .out = out, .n = hr_chains_count(tree) };
	int rc = HR_OK;

	if (!(cutoff_percent >= 0.0 && cutoff_percent <= 100.0))
		return hr_error_set(err, HR_EUSAGE, "the cutoff must be a percentage, 0 to 100");
	r.cum = calloc(r.n, sizeof(*r.cum));
	r.first_child = calloc(r.n + 1, sizeof(*r.first_child));
	r.children = calloc(r.n, sizeof(*r.children));
	if (!r.cum || !r.first_child || !r.children) {
		report_release(&r);
		return hr_error_set(err, HR_ENOMEM, "out of memory for the report");
	}
	sum_cumulative(&r);
	chain_children_list(r.tree, r.n, r.first_child, r.children, listed_child, &r);
	r.cutoff_bytes = (double)r.cum[HR_CHAINS_TOP].bytes * cutoff_percent / 100.0;
	print_header(&r, cutoff_percent);
	if (!r.failed_errno)
		rc = print_tree(&r);
	if (rc)
		hr_error_set(err, rc, "out of memory for the report");
	else if (r.failed_errno)
		rc = hr_error_set(err, HR_EIO, "%s", strerror(r.failed_errno));
	report_release(&r);
	return rc;
}
