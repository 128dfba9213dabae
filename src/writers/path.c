/* SPDX-License-Identifier: Apache-2.0 */
/*
 * path.c - why one object is alive: the chain it is charged to and the objects through
 * which a root reaches it (see writers.h; the scan must have kept paths).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "heapref/writers.h"
#include "writers_internal.h"

#define PATH_ENDS_SHOWN 8 /* a longer path shows this many objects at each end */

struct path_writer {
	FILE *out;
	const struct hr_dump *d;
	const struct hr_chains *tree;
	const struct hr_scan_result *result;
	const struct hr_path_options *opt;
};

/* The name of the chain node object obj is charged to (the field and type that reached it). */
static const char *charged_name(const struct path_writer *w, uint32_t obj)
{
	uint32_t node = hr_result_reached_by(w->result, obj).node;

	if (node == HR_CHAINS_NONE || node == HR_CHAINS_TOP)
		return "?";
	return hr_chains_name(w->tree, hr_chains_node(w->tree, node)->name);
}

static void print_path_object(const struct path_writer *w, uint32_t obj, uint32_t next)
{
	struct hr_object o = hr_dump_object(w->d, obj);
	uint64_t off;
	char name[256];

	fprintf(w->out, "    0x%" PRIx64 " %12" PRIu64 " bytes   %s", o.addr, o.size,
		charged_name(w, obj));
	if (next != HR_SCAN_NOT_REACHED && hr_dump_word_into(w->d, obj, next, &off)) {
		if (hr_result_word_name(w->result, w->d, w->opt->img ? w->opt->img->bin : NULL,
					obj, off, name, sizeof(name))[0])
			fprintf(w->out, "   its %s (+%" PRIu64 ") points to the next", name, off);
		else
			fprintf(w->out, "   its word +%" PRIu64 " points to the next", off);
	}
	fputc('\n', w->out);
}

/* ", goroutine 42 (started by main.serve, chan receive)" for a frame variable's root. */
static void print_root_goroutine(const struct path_writer *w, const char *root, uint32_t obj)
{
	size_t ng;
	const struct hr_goroutine *g = hr_dump_goroutines(w->d, &ng);
	int64_t i = hr_dump_frame_goroutine(w->d, root, obj), fn;

	if (i < 0 || (size_t)i >= ng)
		return;
	fprintf(w->out, ", goroutine %" PRIu64 " (", g[i].goid);
	fn = w->opt->img ? hr_image_func_at(w->opt->img, g[i].gopc) : -1;
	if (fn >= 0)
		fprintf(w->out, "started by %s, ", hr_binary_func(w->opt->img->bin, (size_t)fn)->name);
	if (g[i].wait_reason.len)
		fprintf(w->out, "%s %.*s)", hr_goroutine_status_name(g[i].status),
			(int)(g[i].wait_reason.len < 200 ? g[i].wait_reason.len : 200),
			(const char *)g[i].wait_reason.ptr);
	else
		fprintf(w->out, "%s)", hr_goroutine_status_name(g[i].status));
}

/* A path of n objects (root first) from the root named root, as "path k". */
static void print_objects(const struct path_writer *w, unsigned k, const char *how,
			  const uint32_t *objs, size_t n, const char *root)
{
	fprintf(w->out, "  path %u%s: %zu object%s from %s\n    %s", k, how, n,
		n == 1 ? "" : "s", root, root);
	if (n)
		print_root_goroutine(w, root, objs[0]);
	fputc('\n', w->out);
	for (size_t i = 0; i < n; i++) {
		if (n > 2 * PATH_ENDS_SHOWN && i == PATH_ENDS_SHOWN) {
			fprintf(w->out, "    ... %zu more objects ...\n", n - 2 * PATH_ENDS_SHOWN);
			i = n - PATH_ENDS_SHOWN - 1;
			continue;
		}
		print_path_object(w, objs[i], i + 1 < n ? objs[i + 1] : HR_SCAN_NOT_REACHED);
	}
}

/*
 * The objects from the root's to obj, root first, as the analysis reached them: holders
 * are followed from obj (each was reached before the object it holds, so the walk ends;
 * the bound is for safety), then turned around.
 */
static int charged_path(const struct path_writer *w, uint32_t obj, uint32_t **objs, size_t *n)
{
	size_t cap = hr_dump_object_count(w->d), objs_cap = 0;

	*objs = NULL;
	*n = 0;
	for (uint32_t o = obj; o != HR_SCAN_BY_ROOT && o != HR_SCAN_NOT_REACHED && *n < cap;
	     o = hr_result_reached_by(w->result, o).holder) {
		uint32_t *slot = hr_array_push((void **)objs, n, &objs_cap, sizeof(**objs));

		if (!slot)
			return HR_ENOMEM;
		*slot = o;
	}
	for (size_t i = 0, j = *n; i + 1 < j--; i++) {
		uint32_t t = (*objs)[i];

		(*objs)[i] = (*objs)[j];
		(*objs)[j] = t;
	}
	return HR_OK;
}

/*
 * Marks the root variable (graph node) and the objects of a path but its last (the
 * target) as not to be used again: the next path must go another way.
 */
static void avoid_path(const struct path_writer *w, uint64_t *avoid, uint32_t root,
		       const uint32_t *objs, size_t n)
{
	uint32_t first = hr_heap_graph_root_count(w->opt->graph) + 1;

	if (root)
		hr_bit_set(avoid, root);
	for (size_t i = 0; i + 1 < n; i++)
		hr_bit_set(avoid, first + objs[i]);
}

/*
 * Paths 2..k: each a shortest path through none of the objects of the paths before,
 * until k are shown or none is left (said so).
 */
static int more_paths(const struct path_writer *w, uint32_t obj, uint64_t *avoid,
		      struct hr_error *err)
{
	for (unsigned k = 2; k <= w->opt->paths; k++) {
		uint32_t *nodes;
		size_t n;
		uint32_t nroots = hr_heap_graph_root_count(w->opt->graph), root_chain;
		int rc = hr_heap_graph_path(w->opt->graph, obj, avoid, &nodes, &n, err);

		if (rc == 1) {
			fputs("  no other path avoids the objects of the paths above\n", w->out);
			return HR_OK;
		}
		if (rc)
			return rc;
		/* nodes: the root variable, then objects (graph node ids) */
		root_chain = hr_heap_graph_root_chain(w->opt->graph, nodes[0]);
		avoid_path(w, avoid, nodes[0], NULL, 0);
		for (size_t i = 1; i < n; i++)
			nodes[i - 1] = nodes[i] - nroots - 1;
		print_objects(w, k, "", nodes, n - 1,
			      hr_chains_name(w->tree, hr_chains_node(w->tree, root_chain)->name));
		avoid_path(w, avoid, 0, nodes, n - 1);
		free(nodes);
	}
	return HR_OK;
}

static int print_paths(const struct path_writer *w, uint32_t obj, uint32_t root_chain,
		       const char *root, struct hr_error *err)
{
	uint32_t *objs;
	size_t n;
	uint64_t *avoid = NULL;
	int rc = charged_path(w, obj, &objs, &n);

	if (rc)
		goto out;
	print_objects(w, 1, " (the one the analysis took)", objs, n, root);
	if (w->opt->paths > 1 && w->opt->graph) {
		avoid = calloc(hr_bit_words(hr_heap_graph_count(w->opt->graph)) + 1, sizeof(*avoid));
		if (!avoid) {
			rc = HR_ENOMEM;
			goto out;
		}
		avoid_path(w, avoid, hr_heap_graph_root_node(w->opt->graph, root_chain), objs, n);
		rc = more_paths(w, obj, avoid, err);
	}
out:
	free(objs);
	free(avoid);
	if (rc == HR_ENOMEM)
		hr_error_set(err, rc, "out of memory for the paths");
	return rc;
}

/* Why object i is alive: its chain and paths. *found: whether a root reaches it. */
static int write_object(const struct path_writer *w, uint64_t addr, uint32_t i, bool *found,
			struct hr_error *err)
{
	struct hr_object o = hr_dump_object(w->d, i);
	struct hr_reached_by by = hr_result_reached_by(w->result, i);
	uint32_t root_chain;
	const char *root;

	fprintf(w->out, "0x%" PRIx64 ": in object 0x%" PRIx64 " (%" PRIu64 " bytes)", addr,
		o.addr, o.size);
	if (by.node == HR_CHAINS_NONE || by.node == HR_CHAINS_TOP) {
		fputs(": no root reaches it (garbage since the last GC, or runtime bookkeeping)\n",
		      w->out);
		*found = false;
		return HR_OK;
	}
	root_chain = chain_root(w->tree, by.node);
	root = hr_chains_name(w->tree, hr_chains_node(w->tree, root_chain)->name);
	fprintf(w->out, ", kept alive by %s\n  chain: ", root);
	write_chain(w->out, w->tree, by.node);
	fputc('\n', w->out);
	*found = true;
	return print_paths(w, i, root_chain, root, err);
}

static int finish(FILE *out, int rc, struct hr_error *err)
{
	if (!rc && ferror(out))
		rc = hr_error_set(err, HR_EIO, "cannot write the paths");
	return rc;
}

int hr_write_path(FILE *out, const struct hr_dump *d, const struct hr_chains *tree,
		  const struct hr_scan_result *result, const struct hr_path_options *opt, uint64_t addr,
		  bool *found, struct hr_error *err)
{
	struct path_writer w = { out, d, tree, result, opt };
	int64_t i = hr_dump_object_at(d, addr);

	if (i < 0) {
		fprintf(out, "0x%" PRIx64 ": not in any heap object\n", addr);
		*found = false;
		return finish(out, HR_OK, err);
	}
	return finish(out, write_object(&w, addr, (uint32_t)i, found, err), err);
}

/* The type a chain node's name `x. (T)` names, as "T" without one leading '*'. */
static bool names_type(const char *name, const char *type)
{
	const char *open = strstr(name, ". (");
	size_t len = strlen(name), tlen = strlen(type);

	if (!open || len < 1 || name[len - 1] != ')')
		return false;
	open += 3;
	if (*open == '*' && *type != '*')
		open++;
	return (size_t)(name + len - 1 - open) == tlen && !strncmp(open, type, tlen);
}

/*
 * Whether object obj is of the type named type as the typed walk read it (one value of
 * it, not an array of it): the object a global points straight at has the root's chain,
 * which names no type.
 */
static bool walked_as(const struct path_writer *w, uint32_t obj, const char *type)
{
	const struct hr_binary *bin = w->opt->img ? w->opt->img->bin : NULL;
	bool array;
	uint32_t id = bin ? hr_result_type_of(w->result, obj, &array) : 0;

	return id && !array && !strcmp(hr_binary_type(bin, id)->name, type);
}

/*
 * The heap objects of type: those the typed walk read as one, and those charged to a
 * chain naming it; the biggest `keep` of them, biggest first.
 */
static int biggest_of_type(const struct path_writer *w, const char *type, size_t keep,
			   uint32_t *best, size_t *nbest, uint64_t *count, uint64_t *bytes)
{
	size_t nnodes = hr_chains_count(w->tree);
	uint8_t *match = calloc(nnodes + 1, 1); /* 0 unknown, 1 no, 2 yes */

	if (!match)
		return HR_ENOMEM;
	*nbest = 0;
	*count = *bytes = 0;
	for (uint32_t i = 0; i < hr_dump_object_count(w->d); i++) {
		uint32_t node = hr_result_reached_by(w->result, i).node;
		uint64_t size;
		size_t k;

		if (node == HR_CHAINS_NONE || node >= nnodes)
			continue;
		if (!match[node])
			match[node] = names_type(hr_chains_name(w->tree,
							       hr_chains_node(w->tree, node)->name),
						 type) ? 2 : 1;
		if (match[node] != 2 && !walked_as(w, i, type))
			continue;
		size = hr_dump_object(w->d, i).size;
		(*count)++;
		*bytes += size;
		/* insertion into the few kept, biggest first (ties: lower address first) */
		for (k = *nbest; k > 0 && hr_dump_object(w->d, best[k - 1]).size < size; k--)
			if (k < keep)
				best[k] = best[k - 1];
		if (k < keep) {
			best[k] = i;
			if (*nbest < keep)
				(*nbest)++;
		}
	}
	free(match);
	return HR_OK;
}

int hr_write_paths_of_type(FILE *out, const struct hr_dump *d, const struct hr_chains *tree,
			   const struct hr_scan_result *result, const struct hr_path_options *opt,
			   const char *type, bool *found, struct hr_error *err)
{
	struct path_writer w = { out, d, tree, result, opt };
	struct hr_path_options one = { .paths = 1, .img = opt->img };
	size_t keep = opt->paths ? opt->paths : 1, n;
	uint32_t *best = malloc(keep * sizeof(*best));
	uint64_t count, bytes;
	int rc;

	if (!best)
		return hr_error_set(err, HR_ENOMEM, "out of memory");
	if ((rc = biggest_of_type(&w, type, keep, best, &n, &count, &bytes))) {
		free(best);
		return hr_error_set(err, rc, "out of memory");
	}
	*found = n > 0;
	if (!n)
		fprintf(out, "%s: no reachable object of that type (read as one by the typed "
			     "walk, or charged to a chain `x. (%s)` or `x. (*%s)`)\n", type, type, type);
	else
		fprintf(out, "%s: %" PRIu64 " reachable objects, %" PRIu64 " bytes; the %zu "
			     "biggest:\n", type, count, bytes, n);
	w.opt = &one; /* one path each: the biggest objects are the answer's breadth */
	for (size_t k = 0; k < n && !rc; k++) {
		bool reached;

		rc = write_object(&w, hr_dump_object(d, best[k]).addr, best[k], &reached, err);
	}
	free(best);
	return finish(out, rc, err);
}
