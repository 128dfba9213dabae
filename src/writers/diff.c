/* SPDX-License-Identifier: Apache-2.0 */
/*
 * diff.c - how the chains grew between two dumps, as a text table (see writers.h).
 *
 * The trees are compared by chain, the sequence of names from the root, never by node id
 * (ids depend on the order a scan met the chains): both are rebuilt into one union tree,
 * where hr_chains_child() finds the node of a chain the other tree made already, with
 * each union node's own value in the old and in the new tree beside it. A union node's
 * id is above its parent's, so cumulative values are summed in one backward sweep; the
 * table is printed with an explicit stack, as a chain may be as deep as --max-depth allows.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "heapref/writers.h"
#include "writers_internal.h"

#define INDENT_LEVELS 32 /* deeper lines stay at this indentation and say their depth */

/* One union node's own value in each tree. */
struct values {
	struct chain_value old_own, new_own;
};

enum line_kind { LINE_NODE, LINE_SELF };

struct pending_line {
	enum line_kind kind;
	uint32_t id;     /* LINE_NODE: the node; LINE_SELF: the node the line belongs to */
	uint32_t indent; /* depth below the top line */
};

struct diff {
	FILE *out;
	struct hr_chains *u; /* the union of both trees' chains */
	size_t n;            /* its nodes */
	struct values *v;    /* per union node */
	struct chain_value *old_cum, *new_cum; /* per union node: with all below it */
	bool *changed;       /* per union node: its own value or a descendant's changed */
	uint32_t *first_child; /* per node + 1: changed children of i at [first_child[i], first_child[i+1]) */
	struct chain_child *children;
	struct pending_line *stack;
	size_t nstack, stack_cap;
	int failed_errno;
};

/* b - a, as a signed number (values are counts and sizes, far below 2^63). */
static int64_t growth(uint64_t a, uint64_t b)
{
	return b >= a ? (int64_t)(b - a) : -(int64_t)(a - b);
}

static bool side_empty(const struct chain_value *s)
{
	return !s->objects && !s->bytes;
}

static bool side_equal(const struct chain_value *a, const struct chain_value *b)
{
	return a->objects == b->objects && a->bytes == b->bytes;
}

/* Builds the union tree of old and new and each union node's own values. */
static int merge_trees(struct diff *d, const struct hr_chains *old, const struct hr_chains *new)
{
	size_t nold = hr_chains_count(old), nnew = hr_chains_count(new);
	uint32_t *to_old = malloc(nold * sizeof(*to_old));
	uint32_t *to_new = malloc(nnew * sizeof(*to_new));
	int rc = HR_ENOMEM;

	d->u = hr_chains_new(0);
	if (!to_old || !to_new || !d->u || hr_chains_merge(d->u, old, to_old) ||
	    hr_chains_merge(d->u, new, to_new))
		goto out;
	d->n = hr_chains_count(d->u);
	if (!(d->v = calloc(d->n, sizeof(*d->v))))
		goto out;
	for (size_t i = 0; i < nold; i++) {
		const struct hr_chain_node *node = hr_chains_node(old, (uint32_t)i);

		d->v[to_old[i]].old_own = (struct chain_value){ node->objects, node->bytes };
	}
	for (size_t i = 0; i < nnew; i++) {
		const struct hr_chain_node *node = hr_chains_node(new, (uint32_t)i);

		d->v[to_new[i]].new_own = (struct chain_value){ node->objects, node->bytes };
	}
	rc = HR_OK;
out:
	free(to_old);
	free(to_new);
	return rc;
}

/* Cumulative values and which chains changed, children before parents. */
static void sum_up(struct diff *d)
{
	for (size_t i = 0; i < d->n; i++) {
		d->old_cum[i] = d->v[i].old_own;
		d->new_cum[i] = d->v[i].new_own;
		d->changed[i] = !side_equal(&d->v[i].old_own, &d->v[i].new_own);
	}
	chain_values_sum_up(d->u, d->n, d->old_cum);
	chain_values_sum_up(d->u, d->n, d->new_cum);
	for (size_t i = d->n; i-- > 1;)
		d->changed[hr_chains_node(d->u, (uint32_t)i)->parent] |= d->changed[i];
}

/* A changed child, by its growth. */
static bool changed_child(void *ctx, uint32_t id, struct chain_child *c)
{
	const struct diff *d = ctx;

	if (!d->changed[id])
		return false;
	c->bytes = growth(d->old_cum[id].bytes, d->new_cum[id].bytes);
	c->objects = growth(d->old_cum[id].objects, d->new_cum[id].objects);
	return true;
}

static int push_line(struct diff *d, enum line_kind kind, uint32_t id, uint32_t indent)
{
	struct pending_line *l = hr_array_push((void **)&d->stack, &d->nstack, &d->stack_cap,
					       sizeof(*l));

	if (!l)
		return HR_ENOMEM;
	*l = (struct pending_line){ kind, id, indent };
	return HR_OK;
}

/* Stacks the lines under a shown node, last first: its changed children, then <self>. */
static int push_lines_below(struct diff *d, uint32_t id, uint32_t indent)
{
	uint32_t first = d->first_child[id], end = d->first_child[id + 1];
	const struct values *v = &d->v[id];
	int rc = HR_OK;

	if (first == end) /* nothing below changed: the line says everything */
		return HR_OK;
	if (!side_equal(&v->old_own, &v->new_own))
		rc = push_line(d, LINE_SELF, id, indent);
	for (uint32_t k = end; k-- > first && !rc;)
		rc = push_line(d, LINE_NODE, d->children[k].id, indent);
	return rc;
}

/* `new` for a chain that held nothing in the old dump, `gone` for one empty in the new. */
static const char *mark(const struct chain_value *old, const struct chain_value *new)
{
	if (side_empty(old) && !side_empty(new))
		return "new";
	if (!side_empty(old) && side_empty(new))
		return "gone";
	return "";
}

static void print_row(struct diff *d, const struct chain_value *old, const struct chain_value *new,
		      uint32_t indent, const char *mark_text, const char *label)
{
	uint32_t shown_indent = indent > INDENT_LEVELS ? INDENT_LEVELS : indent;

	if (fprintf(d->out, "%+14" PRId64 " %+11" PRId64 " %14" PRIu64 " %14" PRIu64
		    " %11" PRIu64 " %11" PRIu64 " %-4s  %*s",
		    growth(old->bytes, new->bytes), growth(old->objects, new->objects),
		    old->bytes, new->bytes, old->objects, new->objects, mark_text,
		    (int)(2 * shown_indent), "") < 0 ||
	    (indent > INDENT_LEVELS && fprintf(d->out, "[depth %" PRIu32 "] ", indent) < 0) ||
	    fprintf(d->out, "%s\n", label) < 0)
		d->failed_errno = errno ? errno : EIO;
}

static void print_line(struct diff *d, const struct pending_line *l)
{
	const struct values *v = &d->v[l->id];
	const struct chain_value *old = &d->old_cum[l->id], *new = &d->new_cum[l->id];

	if (l->kind == LINE_SELF)
		print_row(d, &v->old_own, &v->new_own, l->indent, "", "<self>");
	else if (l->id == HR_CHAINS_TOP)
		print_row(d, old, new, 0, "", "(everything reachable from the roots)");
	else
		print_row(d, old, new, l->indent, mark(old, new),
			  hr_chains_name(d->u, hr_chains_node(d->u, l->id)->name));
}

static int print_tree(struct diff *d)
{
	int rc = push_line(d, LINE_NODE, HR_CHAINS_TOP, 0);

	while (!rc && d->nstack && !d->failed_errno) {
		struct pending_line l = d->stack[--d->nstack];

		print_line(d, &l);
		if (l.kind == LINE_NODE)
			rc = push_lines_below(d, l.id, l.indent + 1);
	}
	return rc;
}

static void print_header(struct diff *d)
{
	const struct chain_value *old = &d->old_cum[HR_CHAINS_TOP], *new = &d->new_cum[HR_CHAINS_TOP];
	size_t nchanged = 0, nsame = 0;

	for (size_t i = 1; i < d->n; i++) {
		if (d->changed[i])
			nchanged++;
		else if (!side_empty(&d->old_cum[i]))
			nsame++;
	}
	if (fprintf(d->out, "# heapref diff: reachable bytes %" PRIu64 " -> %" PRIu64 " (%+" PRId64
		    "), objects %" PRIu64 " -> %" PRIu64 " (%+" PRId64 "); figures are cumulative; "
		    "%zu chains changed, %zu unchanged chains not shown\n"
		    "%14s %11s %14s %14s %11s %11s %-4s  %s\n",
		    old->bytes, new->bytes, growth(old->bytes, new->bytes), old->objects,
		    new->objects, growth(old->objects, new->objects),
		    nchanged, nsame, "+bytes", "+objects", "old bytes", "new bytes", "old objs",
		    "new objs", "", "chain") < 0)
		d->failed_errno = errno ? errno : EIO;
}

static void diff_release(struct diff *d)
{
	hr_chains_free(d->u);
	free(d->v);
	free(d->old_cum);
	free(d->new_cum);
	free(d->changed);
	free(d->first_child);
	free(d->children);
	free(d->stack);
}

int hr_write_chain_diff(FILE *out, const struct hr_chains *old, const struct hr_chains *new,
			struct hr_error *err)
{
	struct diff d = { .out = out };
	int rc = merge_trees(&d, old, new);

	if (!rc) {
		d.changed = calloc(d.n, sizeof(*d.changed));
		d.old_cum = calloc(d.n, sizeof(*d.old_cum));
		d.new_cum = calloc(d.n, sizeof(*d.new_cum));
		d.first_child = calloc(d.n + 1, sizeof(*d.first_child));
		d.children = calloc(d.n, sizeof(*d.children));
		if (!d.changed || !d.old_cum || !d.new_cum || !d.first_child || !d.children)
			rc = HR_ENOMEM;
	}
	if (!rc) {
		sum_up(&d);
		chain_children_list(d.u, d.n, d.first_child, d.children, changed_child, &d);
		print_header(&d);
		if (!d.failed_errno)
			rc = print_tree(&d);
	}
	if (rc)
		hr_error_set(err, rc, "out of memory for the diff");
	else if (d.failed_errno)
		rc = hr_error_set(err, HR_EIO, "%s", strerror(d.failed_errno));
	diff_release(&d);
	return rc;
}
