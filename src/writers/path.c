/*
 * path.c - why one object is alive: the chain it is charged to and the objects through
 * which a root reaches it (see writers.h; the scan must have kept paths).
 */
#include <inttypes.h>
#include <stdlib.h>

#include "heapref/writers.h"
#include "writers_internal.h"

#define PATH_ENDS_SHOWN 8 /* a longer path shows this many objects at each end */

/* The offset of the first pointer word of holder that points into target, if any. */
static bool word_pointing_into(const struct hr_dump *d, uint32_t holder, uint32_t target,
			       uint64_t *offset)
{
	struct hr_object h = hr_dump_object(d, holder), t = hr_dump_object(d, target);
	uint32_t ps = hr_dump_params(d)->ptr_size;

	for (uint64_t off = 0; off + ps <= h.size; off += ps) {
		uint64_t v;

		if (!hr_dump_heap_ptr_bit(d, h.addr + off))
			continue;
		v = hr_dump_word(d, h.data + off);
		if (v >= t.addr && v - t.addr < t.size) {
			*offset = off;
			return true;
		}
	}
	return false;
}

static void print_path_object(FILE *out, const struct hr_dump *d, uint32_t obj, uint32_t next)
{
	struct hr_object o = hr_dump_object(d, obj);
	uint64_t off;

	fprintf(out, "    0x%" PRIx64 " %12" PRIu64 " bytes", o.addr, o.size);
	if (next != HR_SCAN_NOT_REACHED && word_pointing_into(d, obj, next, &off))
		fprintf(out, "   its word +%" PRIu64 " points to the next", off);
	fputc('\n', out);
}

/*
 * The objects from the root's to obj, root first. Holders are followed from obj: each
 * was reached before the object it holds, so the walk ends; the bound is for safety.
 */
static int print_path(FILE *out, const struct hr_dump *d, const struct hr_scan *scan,
		      uint32_t obj, const char *root, struct hr_error *err)
{
	size_t n = 0, cap = hr_dump_object_count(d);
	uint32_t *objs = NULL;
	size_t objs_cap = 0;

	for (uint32_t o = obj; o != HR_SCAN_BY_ROOT && o != HR_SCAN_NOT_REACHED && n < cap;
	     o = hr_scan_reached_by(scan, o).holder) {
		uint32_t *slot = hr_array_push((void **)&objs, &n, &objs_cap, sizeof(*objs));

		if (!slot) {
			free(objs);
			return hr_error_set(err, HR_ENOMEM, "out of memory for the path");
		}
		*slot = o;
	}
	fprintf(out, "  path: %zu object%s from the root\n    %s\n", n, n == 1 ? "" : "s", root);
	for (size_t k = n; k-- > 0;) {
		size_t from_root = n - 1 - k;

		if (n > 2 * PATH_ENDS_SHOWN && from_root == PATH_ENDS_SHOWN) {
			fprintf(out, "    ... %zu more objects ...\n", n - 2 * PATH_ENDS_SHOWN);
			k = PATH_ENDS_SHOWN;
			continue;
		}
		print_path_object(out, d, objs[k], k ? objs[k - 1] : HR_SCAN_NOT_REACHED);
	}
	free(objs);
	return HR_OK;
}

int hr_write_path(FILE *out, const struct hr_dump *d, const struct hr_chains *tree,
		  const struct hr_scan *scan, uint64_t addr, struct hr_error *err)
{
	int64_t i = hr_dump_object_at(d, addr);
	struct hr_reached_by by;
	struct hr_object o;
	uint32_t root;
	int rc = HR_OK;

	if (i < 0) {
		fprintf(out, "0x%" PRIx64 ": not in any heap object\n", addr);
		goto out;
	}
	o = hr_dump_object(d, (size_t)i);
	by = hr_scan_reached_by(scan, (uint32_t)i);
	fprintf(out, "0x%" PRIx64 ": in object 0x%" PRIx64 " (%" PRIu64 " bytes)", addr, o.addr,
		o.size);
	if (by.node == HR_CHAINS_NONE || by.node == HR_CHAINS_TOP) {
		fputs(": no root reaches it (garbage since the last GC, or runtime bookkeeping)\n",
		      out);
		goto out;
	}
	root = chain_root(tree, by.node);
	fprintf(out, ", kept alive by %s\n  chain: ",
		hr_chains_name(tree, hr_chains_node(tree, root)->name));
	write_chain(out, tree, by.node);
	fputc('\n', out);
	rc = print_path(out, d, scan, (uint32_t)i,
			hr_chains_name(tree, hr_chains_node(tree, root)->name), err);
out:
	if (!rc && ferror(out))
		rc = hr_error_set(err, HR_EIO, "cannot write the path");
	return rc;
}
